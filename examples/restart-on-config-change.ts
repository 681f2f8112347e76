// Used by restart-on-config-change.yaml. TypeScript, compiled when the rule
// loads: types are removed, not checked (tsc checks them, see docs/script-api.md). The
// export makes tsc check this file as a module of its own; kreact ignores it.
/// <reference path="../scripting/kreact.d.ts" />

type Source = ConfigMap | Secret;
type PodSpec = PodTemplateSpec["spec"];

// usesSource reports whether a pod spec mounts or reads the ConfigMap or
// Secret named name, through volumes (also projected ones), envFrom or env.
function usesSource(podSpec: PodSpec, kind: string, name: string): boolean {
  const isCM = kind === "ConfigMap";
  const ref = (r?: { name?: string }): boolean => !!r && r.name === name;
  for (const v of podSpec.volumes || []) {
    if (isCM ? ref(v.configMap) : (v.secret && v.secret.secretName === name)) return true;
    for (const s of (v.projected && v.projected.sources) || []) {
      if (ref(isCM ? s.configMap : s.secret)) return true;
    }
  }
  const containers = (podSpec.containers || []).concat(podSpec.initContainers || []);
  for (const c of containers) {
    for (const e of c.envFrom || []) {
      if (ref(isCM ? e.configMapRef : e.secretRef)) return true;
    }
    for (const e of c.env || []) {
      const from = e.valueFrom || {};
      if (ref(isCM ? from.configMapKeyRef : from.secretKeyRef)) return true;
    }
  }
  return false;
}

export function onUpdate(oldObj: Source, obj: Source, ctx: Ctx): void {
  const kind = obj.kind;
  const name = obj.metadata.name;
  const binaryData = "binaryData" in obj ? obj.binaryData : undefined;
  const hash = kreact.hash({data: obj.data || {}, binaryData: binaryData || {}}).slice(0, 16);
  const key = "kreact.dev/" + kind.toLowerCase() + "-" + name;
  const deployments = kreact.list("deployments.apps", {namespace: obj.metadata.namespace}) as Deployment[];
  for (const d of deployments) {
    const template = d.spec.template;
    if (!usesSource(template.spec, kind, name)) continue;
    const annotations = (template.metadata && template.metadata.annotations) || {};
    if (annotations[key] === hash) continue;
    kreact.patch(d, {spec: {template: {metadata: {annotations: {[key]: hash}}}}});
    kreact.event(d, {reason: "ConfigChanged", message: kind + " " + name + " changed; rolling out (hash " + hash + ")"});
    kreact.log("restarting deployment", {deployment: d.metadata.name, source: kind + "/" + name, changed: [...ctx.changed]});
  }
}
