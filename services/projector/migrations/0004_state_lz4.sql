-- A run's state is rewritten whole on every batch that touches the run, and past 2 kB Postgres compresses it
-- (TOAST). lz4 compresses several times faster than the default pglz for about the same size. A server built
-- without lz4, or one that cannot set a column's compression, keeps pglz: the read model works either way.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE "runs" ALTER COLUMN "state" SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'runs.state keeps the default compression: %', SQLERRM;
END $$;
