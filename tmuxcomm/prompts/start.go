package prompts

import "context"

// Start runs the sentry in the background, beginning once after is closed (nil: at once), for as
// long as ctx lasts: the one way the bridge and the console run it beside their own work. The
// stop it returns ends the sentry and waits until Run has returned (the questions it opened left
// as their own waits end). An error that stops the sentry is said through Logf.
func (s *Sentry) Start(ctx context.Context, after <-chan struct{}) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if after != nil {
			select {
			case <-after:
			case <-ctx.Done():
				return
			}
		}
		if err := s.Run(ctx); err != nil {
			s.logf("the agents' own prompts are not watched: %v", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
