/**
 * The one way a route reaches a run's RunCoordinator: its Durable Object is named by the
 * run id, so every request about a run lands on the same object.
 */
export function coordinatorFor<T extends Rpc.DurableObjectBranded | undefined>(
  env: { readonly RUN_COORDINATOR: DurableObjectNamespace<T> },
  runId: string,
): DurableObjectStub<T> {
  return env.RUN_COORDINATOR.get(env.RUN_COORDINATOR.idFromName(runId));
}
