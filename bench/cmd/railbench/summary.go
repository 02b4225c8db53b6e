package main

import (
	"fmt"
	"math"
	"strings"
)

func f1(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", x)
}

func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// summarize turns the results into the `name: value` lines, one comparison
// each. Ratios are ours divided by theirs, medians measured in this run.
func summarize(r *Results) []SummaryLine {
	var out []SummaryLine
	add := func(name, format string, args ...any) {
		out = append(out, SummaryLine{Name: name, Value: fmt.Sprintf(format, args...)})
	}
	if x := r.Extract; x != nil {
		add("extract_corpus_pages_per_s", "%s wall, %s per CPU-second (%d real filings, %d pages, medians of %d)", f1(x.CorpusPagesPerS.Median), f1(x.CorpusPagesCPU.Median), x.CorpusFiles, x.CorpusPages, len(x.CorpusPagesPerS.Values))
		add("extract_300_pages_per_s", "%s wall, %s per CPU-second (generated 300-page filing, 40 lines a page, medians of %d)", f1(x.Generated["300"].Median), f1(x.GeneratedCPU["300"].Median), len(x.Generated["300"].Values))
		add("extract_linearity", "%.2f (CPU time per page at 900 pages / at 100 pages: %s vs %s pages per CPU-second; 1.00 is linear)", x.LinearRatio, f1(x.GeneratedCPU["900"].Median), f1(x.GeneratedCPU["100"].Median))
		add("extract_peak_rss_mib", "%.1f corpus, %.1f 300 pages (a child process; %.1f extracting nothing)", x.PeakRSSCorpusMiB, x.PeakRSS300MiB, x.PeakRSSBaseMiB)
	}
	if p := r.Prune; p != nil && len(p.Sizes) > 0 {
		var parts, before []string
		for _, n := range p.Sizes {
			st := p.Stages[fmt.Sprint(n)]
			parts = append(parts, fmt.Sprintf("%d: %.1f", n, st.Steady.Median))
			before = append(before, fmt.Sprintf("%d: %.1f", n, st.Baseline.Median))
		}
		lo, hi := p.Stages[fmt.Sprint(p.Sizes[0])], p.Stages[fmt.Sprint(p.Sizes[len(p.Sizes)-1])]
		add("frame_prune_pass_ms", "%s (old frames kept, none prunable; largest/smallest %s) / before the candidates %s (%s); a pass pruning 100 frames %.1f ms at %d; Keep %d, median of %d",
			strings.Join(parts, " · "), ratio(hi.Steady.Median, lo.Steady.Median), strings.Join(before, " · "),
			ratio(hi.Baseline.Median, lo.Baseline.Median), hi.Pruning.Median, hi.OldFrames, p.Keep, p.Reps)
	}
	if u := r.PerUpload; u != nil {
		tail := fmt.Sprintf("(%d matters x %d uploads then a Regenerate, median of %d)", u.Matters, u.Uploads, u.Reps)
		for _, sys := range []string{"rail", "river", "river_unique"} {
			p, ok := u.Systems[sys]
			if !ok {
				continue
			}
			add(sys+"_xacts_per_served_upload", "%.2f %s", p.Xacts.Median, tail)
			add(sys+"_round_trips_per_served_upload", "%.2f %s", p.RoundTrips.Median, tail)
			add(sys+"_rows_written_per_served_upload", "%.2f %s", p.Rows.Median, tail)
			add(sys+"_wal_bytes_per_served_upload", "%.0f %s", p.WALBytes.Median, tail)
			add(sys+"_model_calls_per_served_upload", "%.2f %s", p.ModelCalls.Median, tail)
			if sys == "rail" {
				add("rail_lambda_invocations_per_served_upload", "%.2f trigger+builder, plus %.2f relay (scheduled, time-driven) %s", p.Invocations.Median, p.RelayInv.Median, tail)
				if len(p.BuilderInvPerBuild.Values) > 0 {
					add("rail_builder_invocations_per_build", "%.2f (builder invocation-seconds per build %.4f: GB-seconds per build at 1 GB) %s",
						p.BuilderInvPerBuild.Median, p.BuilderSecsPerBuild.Median, tail)
				}
			}
			if sys == "river_unique" {
				add("river_unique_uploads_not_in_final_brief", "%.0f %s", p.Lost.Median, tail)
			}
		}
		if a, b := u.Systems["rail"], u.Systems["river"]; a.WALBytes.Median > 0 {
			add("river_vs_rail_wal_bytes_per_served_upload", "%s (River one job per upload / rail; above 1: the rail writes less)", ratio(b.WALBytes.Median, a.WALBytes.Median))
			add("river_vs_rail_xacts_per_served_upload", "%s", ratio(b.Xacts.Median, a.Xacts.Median))
		}
	}
	if d := r.Day; d != nil {
		out = append(out, daySummary(d)...)
	}
	if b := r.Backfill; b != nil {
		add("live_p99_with_backfill_ratio", "%.2f (live upload -> current p99 %.1f ms with a %d-matter backfill at %g/min on its own queue and %d builders / %.1f ms without; p50 %.1f / %.1f ms; %d live demands, %s builds, median of %d)",
			b.P99Ratio, b.WithP99.Median, b.Matters, b.BackfillRate, b.BackfillWork, b.WithoutP99.Median,
			b.WithP50.Median, b.WithoutP50.Median, b.LiveDemands, b.BuildTime, b.Reps)
	}
	summarizeFairness(r.Fairness, add)
	if m := r.Memory; m != nil && len(m.Modes) > 0 {
		add("build_peak_rss", "stream %.0f MB / all-in-memory %.0f MB = %.2fx (digest builder, LoadInputs+Build in a child process); %d documents x %d pages, %.0f MB of text, median of %d",
			m.Modes["stream-digest"].MedianMB, m.Modes["all-in-memory"].MedianMB, m.StreamRatio,
			m.Documents, m.Pages, m.TextMB, len(m.Modes["stream-digest"].PeakRSSMB))
		if x, ok := m.Modes["stream-extractive"]; ok {
			add("build_peak_rss_extractive", "stream %.0f MB (extractive builder), %d documents x %d pages, median of %d",
				x.MedianMB, m.Documents, m.Pages, len(x.PeakRSSMB))
		}
	}
	if t := r.Throughput; t != nil {
		reps := len(t.RailE2E.Values)
		if reps > 0 {
			path := fmt.Sprintf("the builder function's batch path (Worker.BuildBatch: one claim and one read statement per batch of up to %d, one group commit statement for the builds that finish together)", t.Batch)
			add("ledger_vs_river", "%s (rail %s rebuilds/s / River %s jobs/s; fact->trigger batch->claim->commit vs InsertMany batch->work->complete, batches of %d, W=%d, %d each, %s, median of %d)",
				ratio(t.RailE2E.Median, t.RiverE2E.Median), f1(t.RailE2E.Median), f1(t.RiverE2E.Median), t.Batch, t.Workers, t.Rebuilds, path, reps)
			if len(t.RailE2ETriggerEach.Values) > 0 {
				add("ledger_vs_river_trigger_matter_by_matter", "%s (control: rail %s rebuilds/s with the trigger recording each matter in its own transaction, its path before ops.receive_facts and its fallback / River %s jobs/s)",
					ratio(t.RailE2ETriggerEach.Median, t.RiverE2E.Median), f1(t.RailE2ETriggerEach.Median), f1(t.RiverE2E.Median))
				add("ledger_vs_river_one_by_one", "%s (control: rail %s rebuilds/s, one Demand statement a matter / River %s jobs/s, one Insert a job: this figure's definition before the trigger's batch call)",
					ratio(t.RailE2EOneDemandEach.Median, t.RiverE2EOneInsertEach.Median), f1(t.RailE2EOneDemandEach.Median), f1(t.RiverE2EOneInsertEach.Median))
			}
			add("ledger_vs_river_drain", "%s (rail %s rebuilds/s / River %s jobs/s; backlog drain, median of %d)",
				ratio(t.RailDrain.Median, t.RiverDrain.Median), f1(t.RailDrain.Median), f1(t.RiverDrain.Median), reps)
		}
		if len(t.RiverDefaultE2E.Values) > 0 && reps > 0 {
			add("ledger_vs_river_default_config", "%s (rail %s / River with default fetch settings %s jobs/s, %d jobs)",
				ratio(t.RailE2E.Median, t.RiverDefaultE2E.Median), f1(t.RailE2E.Median), f1(t.RiverDefaultE2E.Median), r.Options.RiverDefaultN)
		}
		if len(t.PgbenchSingle.Values) > 0 {
			if reps > 0 {
				add("ledger_vs_pgbench", "%s (rail e2e %s rebuilds/s / pgbench single-row UPDATE %s tps, -c %d -j 2; a rebuild is a trigger batch's share, a claim's and a commit's)",
					ratio(t.RailE2E.Median, t.PgbenchSingle.Median), f1(t.RailE2E.Median), f1(t.PgbenchSingle.Median), t.Workers)
				add("ledger_drain_vs_pgbench", "%s (rail drain %s rebuilds/s, 2 transactions each / pgbench single-row UPDATE %s tps)",
					ratio(t.RailDrain.Median, t.PgbenchSingle.Median), f1(t.RailDrain.Median), f1(t.PgbenchSingle.Median))
			}
			add("pgbench_N_tps", "%s (pgbench -N, 5 statements per transaction)", f1(t.PgbenchN.Median))
		}
		if reps > 0 {
			add("roundtrips_per_rebuild_rail", "%.2f (wire round trips per served rebuild, drain; River: %.2f per job)",
				t.RailDrainRoundTrips.Median, t.RiverDrainRoundTrip.Median)
			if len(t.RailE2EServerCPU.Values) > 0 && len(t.RiverE2EServerCPU.Values) > 0 {
				add("cpu_ms_per_item_e2e", "rail %.3f server + %.3f client per rebuild / River %.3f server + %.3f client per job (CPU over the end-to-end timed part: the server's processes and this process, producers included; medians of %d)",
					t.RailE2EServerCPU.Median, t.RailE2EClientCPU.Median, t.RiverE2EServerCPU.Median, t.RiverE2EClientCPU.Median, len(t.RailE2EServerCPU.Values))
			}
		}
	}
	if rl := r.Relay; rl != nil {
		add("relay_vs_watermill", "%s (rail Relay %s facts/s / watermill-sql forwarder %s facts/s; backlog of %d to an in-memory sink, median of %d)",
			ratio(rl.Rail.Median, rl.Watermill.Median), f1(rl.Rail.Median), f1(rl.Watermill.Median), rl.Facts, len(rl.Rail.Values))
		if len(rl.RailRows.Values) > 0 {
			add("relay_round_trips_per_fact", "rail %.3f / watermill %.3f (wire round trips per fact relayed, drain only; statements %.3f / %.3f; medians)",
				rl.RailRoundTrips.Median, rl.WatermillRoundTrips.Median, rl.RailStatements.Median, rl.WatermillStatements.Median)
			add("relay_rows_written_per_fact", "rail %.3f / watermill %.3f (n_tup_ins+upd+del per fact relayed, drain only; medians)",
				rl.RailRows.Median, rl.WatermillRows.Median)
			add("relay_wal_bytes_per_fact", "rail %.0f / watermill %.0f (pg_stat_wal bytes per fact relayed, drain only; medians)",
				rl.RailWAL.Median, rl.WatermillWAL.Median)
			add("relay_xacts_per_fact", "rail %.3f / watermill %.3f (transactions committed per fact relayed, drain only; medians)",
				rl.RailXacts.Median, rl.WatermillXacts.Median)
		}
	} else {
		add("relay_vs_watermill", "not measured (section not run)")
	}
	if s := r.Stale; s != nil {
		add("stale_writes_rail", "%d (of %d stalled attempts that finished after a takeover, %d reps; fenced by token)", s.RailStale, s.RailAttempts, s.Reps)
		add("stale_writes_river", "%d (of %d rescued-and-re-run attempts writing + JobCompleteTx in one transaction after the job timeout: %d while the re-run ran, %d after it completed)",
			s.RiverStale, s.RiverAttempts, s.RiverStaleDuringRerun, s.RiverStaleAfterRerun)
		add("stale_writes_river_ctx", "%d (of %d stalled attempts that use the job context River cancelled at JobTimeout; their error report re-queued %d running re-runs)",
			s.RiverCtxStale, s.RiverCtxAttempts, s.RiverCtxRequeued)
	}
	if b := r.Burst; b != nil {
		add("builds_per_burst_rail", "%s (follow-up builds after %d demands during one build; final result stale in %d of %d reps)", fmtF(b.Rail.Median), b.K, b.RailStaleReps, b.Reps)
		add("builds_per_burst_river_unique", "%s (UniqueOpts ByArgs; mid-build inserts skipped as duplicates: %s; final result stale in %d of %d reps)",
			fmtF(b.RiverUnique.Median), fmtF(b.RiverUniqueSkipped.Median), b.RiverUniqueStaleReps, b.Reps)
		add("builds_per_burst_river", "%s (no uniqueness; max concurrent builds of one matter: %s)", fmtF(b.River.Median), fmtF(b.RiverMaxParallel.Median))
	}
	if rt := r.RoundTrips; rt != nil {
		m := rt.Modes[r.Options.ExecMode]
		add("roundtrips_claim", "%.2f (%s mode; exec mode: %.2f)", m.ClaimRoundTrips, r.Options.ExecMode, rt.Modes["exec"].ClaimRoundTrips)
		add("roundtrips_commit", "%.2f (%s mode; exec mode: %.2f)", m.CommitRoundTrips, r.Options.ExecMode, rt.Modes["exec"].CommitRoundTrips)
		add("roundtrips_demand", "%.2f", m.DemandRoundTrips)
		add("roundtrips_claim_batch", "%.2f per batch of %d (%s mode; exec mode: %.2f); the builds' reads %.2f per batch (exec mode: %.2f)",
			m.BatchClaimRoundTrips, m.BatchOf, r.Options.ExecMode, rt.Modes["exec"].BatchClaimRoundTrips,
			m.BatchReadRoundTrips, rt.Modes["exec"].BatchReadRoundTrips)
		add("roundtrips_commit_group", "%.2f per group of %d frames (%s mode; exec mode: %.2f)",
			m.BatchCommitRoundTrips, m.BatchOf, r.Options.ExecMode, rt.Modes["exec"].BatchCommitRoundTrips)
	}
	if g := r.Growth; g != nil {
		var c, k, d []string
		for _, st := range g.Stages {
			c = append(c, fmt.Sprintf("%s=%.2f", sizeName(st.HistoryRows), st.ClaimP50.Median))
			k = append(k, fmt.Sprintf("%s=%.2f", sizeName(st.HistoryRows), st.CommitP50.Median))
			d = append(d, fmt.Sprintf("%s=%.0f", sizeName(st.HistoryRows), st.Drain.Median))
		}
		add("growth_claim_p50_ms", "%s (history rows each in frames and runs, over %d matters)", strings.Join(c, " "), g.Matters)
		add("growth_commit_p50_ms", "%s", strings.Join(k, " "))
		add("growth_drain_ms", "%s (%d matters, W=%d)", strings.Join(d, " "), g.Matters, r.Options.Workers)
		if x := g.IndexExperiment; x != nil {
			add("growth_claim_p50_ms_partial_index", "%.2f at %s (experiment: partial index on runs WHERE outcome IN ('claimed','lease_expired'); commit p50 %.2f, drain %.0f ms)",
				x.ClaimP50.Median, sizeName(x.HistoryRows), x.CommitP50.Median, x.Drain.Median)
		}
	}
	if b := r.Brief; b != nil && len(b.Sizes) == 3 {
		add("brief_300_pages", "%s ms wall, %s ms CPU (extractive Brief of %d pages in %d documents from real filings, median of %d)",
			f1(b.Sizes[1].MedianMs), f1(b.Sizes[1].MedianCPU), b.Sizes[1].Pages, b.Sizes[1].Documents, len(b.Sizes[1].Ms))
		add("brief_linear_in_pages", "%.2f (CPU µs per page at %d pages / at %d pages: %.0f / %.0f; at %d pages %.0f; wall-time ratio %.2f)",
			b.LinearityCPU, b.Sizes[2].Pages, b.Sizes[0].Pages, b.Sizes[2].PerPageCPU, b.Sizes[0].PerPageCPU, b.Sizes[1].Pages, b.Sizes[1].PerPageCPU, b.Linearity)
		if b.RSS != nil {
			add("brief_300_pages_peak_rss", "%d KB building / %d KB loading the same input only (+%d KB for the build)",
				b.RSS.BuildKB, b.RSS.LoadOnlyKB, b.RSS.BuildKB-b.RSS.LoadOnlyKB)
		}
	}
	return out
}

func fmtF(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}
