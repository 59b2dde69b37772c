// Whether rendered NetworkPolicies let a connection through, by the rules of networking.k8s.io/v1: a pod selected
// by no policy of a direction is open in that direction; a selected pod accepts only what some rule allows; a
// connection needs both the sender's egress and the receiver's ingress. Enough for the fields these manifests use
// (pod, namespace and ipBlock peers; numeric ports); anything else throws instead of guessing.
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import type { INetworkPolicyPort } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort';
import type { K8sObject } from './kustomize';

type ILabelSelector = NonNullable<INetworkPolicy['spec']>['podSelector'];

/** A pod (namespace and labels) or an address outside the cluster. */
export type Endpoint = { namespace: string; labels: Record<string, string> } | { ip: string };

export interface Connection {
  from: Endpoint;
  to: Endpoint;
  port: number;
  protocol?: 'TCP' | 'UDP';
}

export function selects(selector: ILabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case 'In':
        return key in labels && values.includes(labels[key]!);
      case 'NotIn':
        return !(key in labels) || !values.includes(labels[key]!);
      case 'Exists':
        return key in labels;
      case 'DoesNotExist':
        return !(key in labels);
      default:
        throw new Error(`label selector operator ${operator} is not implemented`);
    }
  });
  return byLabel && byExpression;
}

const ipv4 = (ip: string): number => {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`not an IPv4 address: ${ip}`);
  return parts.reduce((n, p) => n * 256 + p, 0);
};

export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base!) / size);
}

const isPod = (e: Endpoint): e is { namespace: string; labels: Record<string, string> } => 'namespace' in e;

function peerMatches(peer: INetworkPolicyPeer, policyNamespace: string, endpoint: Endpoint): boolean {
  if (peer.ipBlock) {
    if (isPod(endpoint)) return false;
    const { cidr, except = [] } = peer.ipBlock;
    return inCidr(endpoint.ip, cidr) && !except.some((range) => inCidr(endpoint.ip, range));
  }
  if (!isPod(endpoint)) return false;
  const namespaceLabels = { 'kubernetes.io/metadata.name': endpoint.namespace };
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, namespaceLabels)
    : endpoint.namespace === policyNamespace;
  return namespaceOk && selects(peer.podSelector, endpoint.labels);
}

function portMatches(ports: INetworkPolicyPort[] | undefined, port: number, protocol: string): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if (typeof p.port === 'string') throw new Error(`named port ${p.port} is not implemented`);
    return (p.protocol ?? 'TCP') === protocol && (p.port === undefined || p.port === port);
  });
}

type Direction = 'Ingress' | 'Egress';

const typesOf = (policy: INetworkPolicy): Direction[] =>
  policy.spec?.policyTypes ?? (policy.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress']);

/** The policies of `objects` that select the pod `endpoint` for `direction`. */
export function policiesSelecting(
  objects: K8sObject[],
  endpoint: Endpoint,
  direction: Direction,
): INetworkPolicy[] {
  if (!isPod(endpoint)) return [];
  return objects
    .filter((o) => o.kind === 'NetworkPolicy')
    .map((o) => o as unknown as INetworkPolicy)
    .filter(
      (p) =>
        (p.metadata?.namespace ?? '') === endpoint.namespace &&
        typesOf(p).includes(direction) &&
        selects(p.spec?.podSelector, endpoint.labels),
    );
}

function sideAllows(objects: K8sObject[], c: Connection, direction: Direction): boolean {
  const self = direction === 'Egress' ? c.from : c.to;
  const other = direction === 'Egress' ? c.to : c.from;
  const policies = policiesSelecting(objects, self, direction);
  if (policies.length === 0) return true;
  const protocol = c.protocol ?? 'TCP';
  return policies.some((policy) => {
    const namespace = policy.metadata?.namespace ?? '';
    const rules =
      direction === 'Egress'
        ? (policy.spec?.egress ?? []).map((r) => ({ peers: r.to, ports: r.ports }))
        : (policy.spec?.ingress ?? []).map((r) => ({ peers: r.from, ports: r.ports }));
    return rules.some(
      ({ peers, ports }) =>
        portMatches(ports, c.port, protocol) &&
        (!peers || peers.length === 0 || peers.some((peer) => peerMatches(peer, namespace, other))),
    );
  });
}

/** Whether the policies in `objects` let connection `c` through (its sender's egress and receiver's ingress). */
export function allows(objects: K8sObject[], c: Connection): boolean {
  return sideAllows(objects, c, 'Egress') && sideAllows(objects, c, 'Ingress');
}
