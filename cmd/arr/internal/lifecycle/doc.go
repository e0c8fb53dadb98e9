// Package lifecycle runs the long-running components of an arr process
// (HTTP servers, the projection runner, the meters, the audit chain, the
// head signer, …) and stops them in a stated order within one grace
// period.
//
// A Group holds stages. Run starts every component, and when its context
// ends or a component fails it stops the stages in order: a stage's
// components have their contexts cancelled and their Stop called (an HTTP
// server's Shutdown, which drains in-flight requests), and the next stage
// begins once every Stop of this one has returned. Then Run waits for
// every component to return, and returns when they all have or when the
// grace period, counted from the start of the shutdown, is over (Expired
// then reports it).
//
//	g := lifecycle.New(grace, log)
//	g.Add(lifecycle.Intake, lifecycle.Component{Name: "projections", Run: runner.Run})
//	g.Add(lifecycle.Intake, lifecycle.Server("gateway", srv, ln))
//	g.Add(lifecycle.Recorders, lifecycle.Component{Name: "meter", Run: meter.Run})
//	err := g.Run(ctx)
package lifecycle
