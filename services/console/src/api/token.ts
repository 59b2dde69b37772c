// The tab's API token and the headers it gives: no schema, so the page's first script (main.tsx) can use it.

const TOKEN_KEY = 'dura.console.token';

/** The bearer token the console presents, kept for this browser tab only. */
export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** Headers of every call: the token, when there is one. */
export function authHeaders(): Record<string, string> {
  const token = tokenStore.get();
  return token ? { authorization: `Bearer ${token}` } : {};
}
