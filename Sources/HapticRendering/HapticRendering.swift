// HapticRendering: from an AHAP pattern to motor output over time. Pure: no Glibc, no I/O.
//
// PatternVoices     pattern (+ runtime controls) -> voices, controls, sounding limit: the one reading of a pattern
// PatternRenderer   pattern (+ runtime controls) -> MotorTimeline (exact linear segments)
// WaveformRenderer  pattern (+ runtime controls) -> ActuatorFrames (voice-coil waveforms, block by block)
// MotorTimeline     evaluate at any instant; scale (rate), slice (seek), loop, mix several players
// DeviceCommandPlanner  timeline -> RumbleCommand list for a RenderProfile (quantised, rate-limited, hold times)
// NativePeriodicProgram pattern -> FF_PERIODIC effects with envelopes and replay delays, where exact
