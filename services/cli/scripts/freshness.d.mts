// Types of freshness.mjs for the TypeScript tests that import it.
export declare const OUTPUT: string;
export declare const BUILD_INFO: string;
export declare function staleReason(paths?: {
  output: string;
  buildInfo: string;
  root: string;
}): string | undefined;
