import { DuraError } from '@dura/contracts';

/** A parsed cron expression: the allowed values of each field, in local wall-clock time. */
export interface CronExpression {
  source: string;
  seconds: ReadonlySet<number>;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** Both day fields restricted: a day matches either (classic cron); otherwise both must. */
  dayOr: boolean;
  /** Every hour allowed: the repeated hour of a fall-back fires again, and skipped local times are skipped. */
  everyHour: boolean;
}

export class InvalidCron extends DuraError {
  constructor(source: string, why: string) {
    super(
      'invalid_cron',
      `cron expression "${source}" is invalid: ${why}; expected 5 fields (minute hour day month weekday) or 6 with seconds first, e.g. "*/5 * * * *"`,
    );
  }
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  nameBase?: number;
}

const FIELDS: Record<'second' | 'minute' | 'hour' | 'day' | 'month' | 'weekday', FieldSpec> = {
  second: { name: 'second', min: 0, max: 59 },
  minute: { name: 'minute', min: 0, max: 59 },
  hour: { name: 'hour', min: 0, max: 23 },
  day: { name: 'day of month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  weekday: { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
};

/** Parses a 5-field (minute first) or 6-field (second first) cron expression; throws `InvalidCron`. */
export function parseCron(source: string): CronExpression {
  const parts = source.trim().split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6)
    throw new InvalidCron(source, `it has ${parts.length} fields`);
  const [sec, min, hour, day, month, weekday] = parts.length === 6 ? parts : ['0', ...parts];
  const field = (text: string | undefined, spec: FieldSpec) => parseField(source, text ?? '', spec);
  const weekdays = new Set([...field(weekday, FIELDS.weekday)].map((d) => d % 7));
  const hours = field(hour, FIELDS.hour);
  return {
    source,
    seconds: field(sec, FIELDS.second),
    minutes: field(min, FIELDS.minute),
    hours,
    days: field(day, FIELDS.day),
    months: field(month, FIELDS.month),
    weekdays,
    dayOr: !isStar(day) && !isStar(weekday),
    everyHour: hours.size === 24,
  };
}

const isStar = (text: string | undefined): boolean => text === '*' || text === '?';

function parseField(source: string, text: string, spec: FieldSpec): Set<number> {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    const [range = '', stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1)
      throw new InvalidCron(source, `the ${spec.name} step "${stepText}" is not a positive integer`);
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      [lo, hi] = [spec.min, spec.max];
    } else {
      const [a = '', b] = range.split('-');
      lo = value(source, a, spec);
      hi = b === undefined ? (stepText === undefined ? lo : spec.max) : value(source, b, spec);
    }
    if (lo > hi) throw new InvalidCron(source, `the ${spec.name} range "${range}" runs backwards`);
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return values;
}

function value(source: string, text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  const n = named >= 0 ? named + (spec.nameBase ?? 0) : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < spec.min || n > spec.max)
    throw new InvalidCron(source, `"${text}" is not a ${spec.name} (${spec.min}-${spec.max})`);
  return n;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The first local wall-clock time at or after `local` (both as UTC-based milliseconds of a naive date-time)
 * that the expression matches, or undefined when none within five years (e.g. "0 0 30 2 *").
 */
export function nextLocalMatch(cron: CronExpression, local: number): number | undefined {
  let t = Math.ceil(local / SECOND) * SECOND;
  const limit = t + 5 * 366 * DAY;
  while (t <= limit) {
    const d = new Date(t);
    if (!cron.months.has(d.getUTCMonth() + 1)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    } else if (!dayMatches(cron, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    } else if (!cron.hours.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1);
    } else if (!cron.minutes.has(d.getUTCMinutes())) {
      t = Date.UTC(
        d.getUTCFullYear(),
        d.getUTCMonth(),
        d.getUTCDate(),
        d.getUTCHours(),
        d.getUTCMinutes() + 1,
      );
    } else if (!cron.seconds.has(d.getUTCSeconds())) {
      t += SECOND;
    } else {
      return t;
    }
  }
  return undefined;
}

function dayMatches(cron: CronExpression, d: Date): boolean {
  const dom = cron.days.has(d.getUTCDate());
  const dow = cron.weekdays.has(d.getUTCDay());
  return cron.dayOr ? dom || dow : dom && dow;
}
