package fleet

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector is a prometheus.Collector for a link: at each scrape it reads
// Link.Stats. Register it beside the group's own collector (module
// metrics):
//
//	prometheus.MustRegister(fleet.NewCollector(link, "fusebox"))
//
// The metrics (all carry the label replica):
//
//	fusebox_fleet_link_up                        1 while the link is connected and subscribed
//	fusebox_fleet_link_sessions_total            connections that reached the subscribed state
//	fusebox_fleet_link_downs_total               losses of the link
//	fusebox_fleet_messages_total{outcome}        published, publish-failed, unsent, dropped,
//	                                             unpublishable, received, applied, stale,
//	                                             malformed, own, unsigned, limited,
//	                                             refused, awaiting
//	fusebox_fleet_leases_total{outcome}          won, lost, error, renewed
//
// It keeps no state and starts nothing; it is safe for concurrent use.
type Collector struct {
	l                   *Link
	up, sessions, downs *prometheus.Desc
	messages, leases    *prometheus.Desc
	replica             string
}

// NewCollector returns a collector for l. namespace "" means "fusebox".
// A collector of a nil or zero Link, which New did not make, cannot report
// anything: registering it returns an error naming the mistake, and so
// does a scrape.
func NewCollector(l *Link, namespace string) *Collector {
	if namespace == "" {
		namespace = "fusebox"
	}
	replica := ""
	if l.made() {
		replica = l.Replica()
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(namespace+"_fleet_"+name, help, append([]string{"replica"}, labels...), nil)
	}
	return &Collector{
		l:        l,
		replica:  replica,
		up:       desc("link_up", "1 while the fleet link is connected to Redis and subscribed; 0 while each supplier is protected by this replica alone."),
		sessions: desc("link_sessions_total", "Connections of the fleet link that reached the subscribed state."),
		downs:    desc("link_downs_total", "Losses of the fleet link."),
		messages: desc("messages_total", "Fleet messages by outcome: published, publish-failed, unsent (link down), dropped (buffer full), unpublishable (a supplier name the wire cannot carry: kept local), received, applied, stale (set aside by the rules), deferred (no executor yet), overflow (applier backlog full), clipped (probe time cut to the local bound), malformed, own, unsigned (not signed with Config.Keys), limited (beyond the trip rate), refused (an action above the fleet's counter), awaiting (a trip short of the quorum).", "outcome"),
		leases:   desc("leases_total", "Probe lease contentions by outcome: won, lost, error (this replica probed on its own), renewed.", "outcome"),
	}
}

// invalid returns why c cannot report anything, or nil. NewCollector
// returns no error: the mistake is refused by Registry.Register instead,
// through an invalid descriptor, and by a scrape, through an invalid
// metric, rather than by a panic on a goroutine of Registry.Gather, which
// no one can recover.
func (c *Collector) invalid() error {
	switch {
	case c == nil || c.up == nil:
		return errors.New("fleet: a nil or zero *Collector (make it with fleet.NewCollector)")
	case !c.l.made():
		return unmade("NewCollector")
	}
	return nil
}

// Describe sends the descriptors of every metric the collector reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if err := c.invalid(); err != nil {
		ch <- prometheus.NewInvalidDesc(err)
		return
	}
	for _, d := range []*prometheus.Desc{c.up, c.sessions, c.downs, c.messages, c.leases} {
		ch <- d
	}
}

// Collect sends the link's current metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if err := c.invalid(); err != nil {
		ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
		return
	}
	s := c.l.Stats()
	up := 0.0
	if s.Up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, c.replica)
	ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.CounterValue, float64(s.Sessions), c.replica)
	ch <- prometheus.MustNewConstMetric(c.downs, prometheus.CounterValue, float64(s.Downs), c.replica)
	for _, m := range []struct {
		outcome string
		n       uint64
	}{
		{"published", s.Published}, {"publish-failed", s.PublishFailed}, {"unsent", s.Unsent}, {"dropped", s.Dropped},
		{"unpublishable", s.Unpublishable},
		{"received", s.Received}, {"applied", s.Applied}, {"stale", s.Stale}, {"deferred", s.Deferred},
		{"overflow", s.Overflow}, {"clipped", s.Clipped}, {"malformed", s.Malformed}, {"own", s.Own},
		{"unsigned", s.Unsigned}, {"limited", s.Limited}, {"refused", s.Refused}, {"awaiting", s.Awaiting},
	} {
		ch <- prometheus.MustNewConstMetric(c.messages, prometheus.CounterValue, float64(m.n), c.replica, m.outcome)
	}
	for _, m := range []struct {
		outcome string
		n       uint64
	}{{"won", s.LeasesWon}, {"lost", s.LeasesLost}, {"error", s.LeaseErrors}, {"renewed", s.Renewals}} {
		ch <- prometheus.MustNewConstMetric(c.leases, prometheus.CounterValue, float64(m.n), c.replica, m.outcome)
	}
}
