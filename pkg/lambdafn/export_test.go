package lambdafn

// CheckFor exposes the handlers' schedule check to the external tests.
func (e ScheduleEvent) CheckFor(fn string) error { return e.check(fn) }
