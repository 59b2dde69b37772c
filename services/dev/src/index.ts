export { startStack } from './stack';
export type { Stack, StackOptions } from './stack';
export { formatEvent } from './format-event';
