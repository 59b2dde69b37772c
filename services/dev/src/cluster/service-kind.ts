/** The services a cluster runs replicas of. */
export type ServiceKind = 'planner' | 'tool-gateway' | 'projector';
