package fleet

import "github.com/prometheus/client_golang/prometheus"

// register registers the metrics of the three jobs; each declares its own
// beside the code that counts them. A collector already registered (a
// second fleet on the same registry, in tests) is left as it is.
func (s *Service) register(reg prometheus.Registerer) {
	if reg == nil {
		return
	}
	for _, cs := range [][]prometheus.Collector{s.enroll.Collectors(), s.intake.Collectors(), s.agents.Collectors()} {
		for _, c := range cs {
			_ = reg.Register(c)
		}
	}
}
