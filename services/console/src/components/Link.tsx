import type { MouseEvent, ReactNode } from 'react';
import { navigate } from '../model/router';

/** An ordinary link (open in a new tab works) that moves within the console without a reload. */
export function Link({ to, className, children }: { to: string; className?: string; children: ReactNode }) {
  const click = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} className={className} onClick={click}>
      {children}
    </a>
  );
}
