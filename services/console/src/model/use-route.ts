import { useEffect, useState } from 'react';
import { routeOf, type Route } from './router';

/** The route the page is on, followed as it moves (`navigate`, back and forward). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.pathname, location.search));
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname, location.search));
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return route;
}
