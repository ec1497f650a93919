// HapticRendering: from an AHAP pattern to motor output over time. Pure: no Glibc, no I/O.
//
// PatternRenderer   pattern (+ runtime controls) -> MotorTimeline (exact linear segments)
// MotorTimeline     evaluate at any instant; scale (rate), slice (seek), loop, mix several players
// DeviceCommandPlanner  timeline -> RumbleCommand list for a RenderProfile (quantised, rate-limited, hold times)
// NativePeriodicProgram pattern -> FF_PERIODIC effects with envelopes and replay delays, where exact
