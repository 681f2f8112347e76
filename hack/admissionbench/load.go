package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// sample is one create: its latency and how it ended.
type sample struct {
	latency time.Duration
	// denied: refused by the check; err: any other error.
	denied bool
	err    error
	// wrong: the answer is not the check's (a ConfigMap without the
	// label allowed while a webhook is configured, or one with it
	// refused).
	wrong bool
}

// load creates ConfigMaps named PREFIX-N at rate per second for d, every
// other one without the owner label, and returns each create's sample
// and how long the creates took. Each create goes on its own goroutine
// at its due time (an open loop): a slow answer delays no other create.
// refuses says whether a webhook is configured to refuse the unlabelled
// ones.
func load(ctx context.Context, client kubernetes.Interface, prefix string, rate float64, d time.Duration, refuses bool) ([]sample, time.Duration) {
	n := int(rate * d.Seconds())
	samples := make([]sample, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if wait := time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))); wait > 0 {
			time.Sleep(wait)
		}
		if ctx.Err() != nil {
			samples = samples[:i]
			break
		}
		wg.Go(func() {
			labelled := i%2 == 0
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%06d", prefix, i), Namespace: namespace},
				Data:       map[string]string{"key": "value"},
			}
			if labelled {
				cm.Labels = map[string]string{"owner": "team-a"}
			}
			t0 := time.Now()
			_, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
			s := sample{latency: time.Since(t0)}
			switch {
			case err == nil:
				s.wrong = refuses && !labelled
			case strings.Contains(err.Error(), checkMessage):
				s.denied = true
				s.wrong = labelled || !refuses
			default:
				s.err = err
			}
			samples[i] = s
		})
	}
	wg.Wait()
	return samples, time.Since(start)
}
