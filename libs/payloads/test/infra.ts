import { Objm, type ObjectStore } from '@nats-io/obj';
import { useNatsConnections, useTestInfra, type TestInfra, type TestNatsHandles } from '@dura/testing';

export { useTestInfra };

export interface BucketHandles extends TestNatsHandles {
  /** The bucket through the object store API directly, bypassing the payload store's checks. */
  rawBucket: (name: string) => Promise<ObjectStore>;
}

/** `useNatsConnections` whose connections also open a bucket directly (`rawBucket`). */
export function useBucketConnections(infra: () => TestInfra): () => Promise<BucketHandles> {
  const open = useNatsConnections(infra);
  return async () => {
    const handles = await open();
    return { ...handles, rawBucket: (name) => new Objm(handles.js).open(name) };
  };
}
