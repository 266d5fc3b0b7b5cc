// Package fuseboxtest helps you test your own code's protection: a
// scriptable fake supplier and a recorder of breaker transitions, both
// made for testing/synctest, where an hour-long outage takes no real time.
// It uses the standard library only.
//
// The story: checkout calls payments through an executor and answers from
// a cache when payments is refused or times out. The test makes payments
// hang and checks that checkout still answers, from the cache, within
// 50 ms, and that the breaker opened:
//
//	synctest.Test(t, func(t *testing.T) {
//		payments, _ := fuseboxtest.NewFake() // healthy
//		var rec fuseboxtest.Recorder
//		ex, _ := executor.New("payments", executor.Config{
//			InvocationTimeout: 40 * time.Millisecond,
//			Breaker:           breaker.Config{ResetTimeout: time.Second, OnTransition: rec.Listen},
//		})
//		defer ex.Close(context.Background())
//		shop := &Checkout{payments: ex, charge: fuseboxtest.Fn(payments, "paid")}
//
//		payments.Set(fuseboxtest.Hang())
//		for range 5 {
//			start := time.Now()
//			answer, err := shop.Pay(t.Context())
//			// answer is the cached one, and time.Since(start) is exactly 40 ms
//		}
//		open, err := rec.WaitForState(t.Context(), breaker.Open) // the fifth timeout tripped it
//	})
//
// A Fake follows a script of phases (Healthy with a latency, Hang, Stall,
// Fail, FailFraction), each for a time or a number of calls, or is
// switched by the test with Set. It serves as the function of a protected
// call (Fn), as an HTTP server (it is an http.Handler; Handler puts it in
// front of yours) and, through Call, inside a gRPC service method or any
// other handler of your own. Transport serves any http.Handler in memory,
// so an HTTP client, fusehttp's Transport included, runs in the bubble
// too: a real socket (httptest.NewServer) cannot, and a hung call to one
// would stall the bubble. docs/testing.md in the repository has the whole
// recipe.
package fuseboxtest
