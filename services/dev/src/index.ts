export { type Stack, type StackOptions, startStack } from './stack';
export { formatEvent } from './format-event';
