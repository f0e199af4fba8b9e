package bench

import (
	"context"
	"fmt"
)

// Measurer measures one trial.
type Measurer interface {
	Measure(ctx context.Context, t Trial) (Result, error)
}

// Run measures the trials in turn with m and returns one Result per trial,
// in order. A trial that fails is recorded with its Error and the run goes
// on; done, if not nil, is called after each trial. Run stops early only when
// ctx is done, returning the results measured so far (the interrupted trial
// is not among them; a trial that completed before ctx was done is) with an
// error wrapping ctx's error that names the trial interrupted and counts
// the configurations measured.
func Run(ctx context.Context, m Measurer, trials []Trial, done func(Result)) ([]Result, error) {
	results := make([]Result, 0, len(trials))
	for _, t := range trials {
		var r Result
		err := ctx.Err()
		if err == nil {
			r, err = m.Measure(ctx, t)
		}
		if err != nil && ctx.Err() != nil {
			return results, &interruptedError{fmt.Sprintf("bench: interrupted while measuring %s, after %d of %d configurations", t, len(results), len(trials)), ctx.Err()}
		}
		if err != nil {
			r = Result{Error: err.Error()}
		}
		r.BatchSize, r.Concurrency = t.BatchSize, t.Concurrency
		results = append(results, r)
		if done != nil {
			done(r)
		}
	}
	return results, nil
}

// interruptedError is Run's error when ctx is done: it says where the
// benchmark stopped, and wraps ctx's error (context.Canceled, say) without
// printing it.
type interruptedError struct {
	msg string
	err error
}

func (e *interruptedError) Error() string { return e.msg }

func (e *interruptedError) Unwrap() error { return e.err }
