package breaker

// NoReason is the reason of a breaker that has never changed state.
const NoReason = noReason
