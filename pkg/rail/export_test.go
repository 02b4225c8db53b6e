package rail

// SetAfterPublish installs the relay's crash-injection hook (tests only).
func SetAfterPublish(r *Relay, f func()) { r.afterPublish = f }
