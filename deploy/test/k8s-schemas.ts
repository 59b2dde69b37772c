// Validates Kubernetes objects against the OpenAPI schemas of their API version (Kubernetes 1.27, from
// kubernetes-models) and KEDA's ScaledObject CRD schema (@kubernetes-models/keda), offline.
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { K8sObject } from './kustomize';

type Validator = (object: K8sObject) => void;

const model =
  <T extends { validate(): void }>(Model: new (data: never) => T): Validator =>
  (object) =>
    new Model(object as never).validate();

const VALIDATORS: Record<string, Validator> = {
  'apps/v1 Deployment': model(Deployment),
  'apps/v1 StatefulSet': model(StatefulSet),
  'autoscaling/v2 HorizontalPodAutoscaler': model(HorizontalPodAutoscaler),
  'networking.k8s.io/v1 NetworkPolicy': model(NetworkPolicy),
  'policy/v1 PodDisruptionBudget': model(PodDisruptionBudget),
  'v1 ConfigMap': model(ConfigMap),
  'v1 Namespace': model(Namespace),
  'v1 Secret': model(Secret),
  'v1 Service': model(Service),
  'v1 ServiceAccount': model(ServiceAccount),
  'keda.sh/v1alpha1 ScaledObject': model(ScaledObject),
};

/** The schema problems of `object`, or [] when it is valid; an API version without a schema here is a problem. */
export function schemaProblems(object: K8sObject): string[] {
  const key = `${object.apiVersion} ${object.kind}`;
  const validate = VALIDATORS[key];
  if (!validate)
    return [
      `${key} ${object.metadata.name}: no schema for this API version and kind in deploy/test/k8s-schemas.ts`,
    ];
  try {
    validate(object);
    return [];
  } catch (err) {
    return [`${key} ${object.metadata.name}: ${(err as Error).message}`];
  }
}
