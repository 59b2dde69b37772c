import type { RunEvent } from '@dura/contracts';
import { evolve } from '../evolve';
import { nextAction, type PlannerAction } from '../next-action';
import { initialRunState, type RunState } from '../run-state';

export type DeepPartial<T> = T extends (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** A specification that did not hold; the message names the path that differs. */
export class SpecificationFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecificationFailed';
  }
}

/** Checks `actual` against `expected` like `toMatchObject`: objects by the keys expected names, arrays whole. */
export function assertMatches(actual: unknown, expected: unknown, path = '$'): void {
  const fail = (what: string): never => {
    throw new SpecificationFailed(`${path}: ${what}, got ${JSON.stringify(actual)}`);
  };
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) fail(`expected an array of ${expected.length}`);
    const items = actual as unknown[];
    if (items.length !== expected.length) fail(`expected ${expected.length} items`);
    expected.forEach((item, i) => assertMatches(items[i], item, `${path}[${i}]`));
  } else if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') fail(`expected an object`);
    for (const [key, value] of Object.entries(expected)) {
      assertMatches((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
  } else if (!Object.is(actual, expected)) {
    fail(`expected ${JSON.stringify(expected)}`);
  }
}

type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** The end of a specification: either a value that matches, or a typed error. */
export interface Outcome<T> {
  /** Passes when the result matches `expected` (subset of keys, arrays whole) or the callback does not throw. */
  then(expected: DeepPartial<T> | ((actual: T) => void)): void;
  /** Passes when the step throws an instance of `type` (and `check`, if given, does not throw). */
  thenThrows<E extends Error>(type: ErrorClass<E>, check?: (error: E) => void): void;
}

function outcome<T>(act: () => T): Outcome<T> {
  return {
    then(expected) {
      const actual = act();
      if (typeof expected === 'function') (expected as (actual: T) => void)(actual);
      else assertMatches(actual, expected);
    },
    thenThrows(type, check) {
      let result: T;
      try {
        result = act();
      } catch (error) {
        if (!(error instanceof type)) {
          throw new SpecificationFailed(`expected ${type.name}, but ${String(error)} was thrown`);
        }
        check?.(error);
        return;
      }
      throw new SpecificationFailed(`expected ${type.name}, but got ${JSON.stringify(result)}`);
    },
  };
}

export interface Decider<State, Event, Action> {
  initialState: () => State;
  evolve: (state: State, event: Event) => State;
  decide: (state: State) => Action;
}

export interface Given<State, Event, Action> {
  /** The state after folding `event` onto the given history. */
  when(event: Event): Outcome<State>;
  /** What the decider does with the given history. */
  whenDeciding(): Outcome<Action>;
}

/** Emmett-style `given(events).when(event).then(state)` over any decider. */
export function deciderSpecification<State, Event, Action>(decider: Decider<State, Event, Action>) {
  return {
    given(events: readonly Event[]): Given<State, Event, Action> {
      const history = [...events]; // a builder may keep appending to the array it handed out
      const state = (): State => history.reduce(decider.evolve, decider.initialState());
      return {
        when: (event) => outcome(() => decider.evolve(state(), event)),
        whenDeciding: () => outcome(() => decider.decide(state())),
      };
    },
  };
}

/** The run decider: the fold plus the planner's `nextAction`. */
export const runSpecification = deciderSpecification<RunState, RunEvent, PlannerAction>({
  initialState: initialRunState,
  evolve,
  decide: nextAction,
});
/** `given(events).when(event).then(state)` over the run's fold and planner. */
export function given(events: readonly RunEvent[]): Given<RunState, RunEvent, PlannerAction> {
  return runSpecification.given(events);
}

/** Freezes a value and everything reachable from it, so any write to it throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
