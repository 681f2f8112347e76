function onAdd(obj, ctx) {
  kreact.patch(obj, {metadata: {labels: {"kreact.dev/labelled": "true"}}});
}

function onUpdate(oldObj, obj, ctx) {
  onAdd(obj, ctx);
}
