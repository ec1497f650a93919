// The engine's one clock.

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock of every haptic deadline (and of uinput's timestamps).
package enum MonotonicTime {
    package static func nanoseconds() -> UInt64 { Sys.monotonicNanoseconds() }
}
