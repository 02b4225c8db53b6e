package localbus

import (
	"fmt"

	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// Wiring is the template's bus and queues, in process.
type Wiring struct {
	Bus    *Bus
	Queues map[string]*Queue // by logical id: TriggerQueue, TriggerDLQ, BuildQueue, BuildDLQ
}

// Queue returns the queue with logical id id, or panics: the ids come from
// the template, which FromTemplate has already read.
func (w *Wiring) Queue(id string) *Queue {
	q, ok := w.Queues[id]
	if !ok {
		panic(fmt.Sprintf("localbus: no queue %q in the wiring", id))
	}
	return q
}

// FromTemplate builds every AWS::SQS::Queue the template declares (redrive
// policies included, timings multiplied by scale) and a bus with the given
// AWS::Events::Rule resources routing to their target queues.
func FromTemplate(tpl *samtemplate.Template, busName, source string, scale float64, rules ...string) (*Wiring, error) {
	w := &Wiring{Bus: NewBus(busName, source), Queues: map[string]*Queue{}}
	specs := map[string]samtemplate.QueueSpec{}
	for _, id := range tpl.Queues() {
		s, err := tpl.Queue(id)
		if err != nil {
			return nil, err
		}
		specs[id] = s
	}
	var build func(id string, depth int) (*Queue, error)
	build = func(id string, depth int) (*Queue, error) {
		if q, ok := w.Queues[id]; ok {
			return q, nil
		}
		s, ok := specs[id]
		if !ok {
			return nil, fmt.Errorf("localbus: template has no queue %q", id)
		}
		if depth > len(specs) {
			return nil, fmt.Errorf("localbus: redrive policies form a cycle at %s", id)
		}
		var dlq *Queue
		if s.RedriveMaxReceiveCount > 0 {
			var err error
			if dlq, err = build(s.DLQ, depth+1); err != nil {
				return nil, fmt.Errorf("localbus: queue %s DLQ: %w", id, err)
			}
		}
		cfg, err := QueueConfigFromSpec(s, dlq, scale)
		if err != nil {
			return nil, err
		}
		q := NewQueue(cfg)
		w.Queues[id] = q
		return q, nil
	}
	for id := range specs {
		if _, err := build(id, 0); err != nil {
			return nil, err
		}
	}
	for _, r := range rules {
		if err := w.Bus.AddTemplateRule(tpl, r, w.Queues); err != nil {
			return nil, err
		}
	}
	return w, nil
}
