package restmapper_test

import (
	"fmt"

	"github.com/kreact/kreact/restmapper"
)

func ExampleMapper_Resolve() {
	// Offline: the built-in resources. Against a cluster, pass a
	// *discovery.Cache instead.
	m := restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
	for _, ref := range []string{"deploy", "Deployment.apps", "events", "apps/v1 Deployment", "hpa.v1.autoscaling", "deploymnets", "Confgmap", "pvx", "zzzzzz"} {
		r, err := m.Resolve(ref)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s → %s (%s)\n", ref, m.Name(r), r.GVK())
	}
	// Output:
	// deploy → deployments.apps (apps/v1, Kind=Deployment)
	// Deployment.apps → deployments.apps (apps/v1, Kind=Deployment)
	// events → events (/v1, Kind=Event)
	// apps/v1 Deployment → deployments.apps (apps/v1, Kind=Deployment)
	// hpa.v1.autoscaling → horizontalpodautoscalers.v1.autoscaling (autoscaling/v1, Kind=HorizontalPodAutoscaler)
	// "deploymnets": no such resource; did you mean "deployments"?
	// "Confgmap": no such resource; did you mean "ConfigMap"?
	// "pvx": no such resource; did you mean "pvc" or "pv"?
	// "zzzzzz": no such resource
}
