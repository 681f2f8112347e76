/// <reference path="../kreact.d.ts" />
// @ts-check
// Roll the Deployments that use a ConfigMap when its data changes.
"use strict";

/** @type {OnUpdate} */
const onUpdate = (oldObj, newObj, ctx) => {
  if (!ctx.changed.some((p) => p.startsWith("data"))) return;
  const hash = kreact.hash(newObj.data ?? {});
  const selector = "config=" + newObj.metadata.name;
  for (const d of kreact.list("deployments.apps", { namespace: newObj.metadata.namespace, labelSelector: selector })) {
    if (d.spec.template.metadata?.annotations?.["example.com/config-hash"] === hash) continue;
    kreact.patch(d, { spec: { template: { metadata: { annotations: { "example.com/config-hash": hash } } } } });
    kreact.event(d, { reason: "ConfigChanged", message: `${newObj.metadata.name} changed at ${kreact.now().toISOString()}` });
  }
};
