// AudioRendering: a pattern's audio events (AudioCustom, AudioContinuous) on its timeline, and the samples they
// make. Pure: no Glibc, no I/O; decoded files come in as `AudioClip`s.
//
// AudioSchedule    pattern (+ runtime controls, clip lengths) -> AudioVoice list on pattern time
// AudioMixer       schedule + clips -> interleaved stereo Float frames at the output's rate, block by block
// AudioMapping     the documented mappings: pitch to playback rate, brightness to a low-pass, the tone
// EqualPower       pan law, stereo balance and the cross-fade curve
