public import AHAP
public import HapticRendering

/// One audio event as it sounds: where its samples come from, when, and the event's own parameter values (the
/// dynamic controls act on them while it plays, in `AudioMixer`).
public struct AudioVoice: Sendable {
    public enum Source: Sendable, Hashable {
        /// `AudioContinuous`: the synthesised tone (`AudioMapping.tone`).
        case tone
        /// `AudioCustom`: the clip decoded from the file the event names or the resource it plays.
        case clip(AudioWaveform)
    }

    public let source: Source
    /// The event's index in the pattern's `events`.
    public let eventIndex: Int
    /// The gain over pattern time: attack, sustain or decay, release; a flat 1 for an `AudioCustom` event without
    /// `EventWaveformUseVolumeEnvelope`.
    package let envelope: GainEnvelope
    /// `AudioVolume`, `AudioPan`, `AudioPitch` and `AudioBrightness` of the event, clamped.
    public let volume: Double
    public let pan: Double
    public let pitch: Double
    public let brightness: Double
    /// `EventWaveformLoopEnabled`: the clip starts again from its beginning until the voice ends.
    public let loops: Bool

    /// When the voice starts and the latest it can sound until (release included), in pattern seconds. A clip
    /// that does not loop may run out earlier.
    public var start: Double { envelope.start }
    public var end: Double { envelope.end }

    /// The envelope's gain at pattern time `time` (0 outside the voice).
    public func gain(at time: Double) -> Double { envelope.gain(at: time, piece: time) }
}

/// The audio voices of a pattern on its timeline, with the audio controls acting on them: what `AudioMixer`
/// renders. Pure: the lengths of the files `AudioCustom` events play come in as `clipDurations`, decoded
/// elsewhere.
///
/// The rules (docs/audio.md): `AudioContinuous` lasts its `EventDuration` (at most 30 s), shaped like a haptic
/// continuous event by `AttackTime`, `DecayTime` (when not `Sustained`, at least `AudioMapping.shortestDecay`)
/// and `ReleaseTime`, with the audio time controls added at its start and end. `AudioCustom` lasts its
/// `EventDuration` when it has one (at most 30 s), else its file's length at the pitch it starts with; it gets
/// that envelope only with `EventWaveformUseVolumeEnvelope`. An event whose file has no clip is skipped and
/// named in `missingClips`.
public struct AudioSchedule: Sendable {
    public let voices: [AudioVoice]
    /// What `AudioCustom` events play that `clipDurations` did not have, in pattern order.
    public let missingClips: [AudioWaveform]
    package let controls: AudioControls

    public init(
        pattern: HapticPattern, clipDurations: [AudioWaveform: Double] = [:], controls runtime: RuntimeControls = .none
    ) {
        let controls = AudioControls(
            parameters: pattern.dynamicParameters + runtime.parameters,
            curves: pattern.parameterCurves + runtime.curves)
        var voices: [AudioVoice] = []
        var missing: [AudioWaveform] = []
        for (index, event) in pattern.events.enumerated() where HapticPattern.isWithinTimeBound(event.relativeTime) {
            switch event.type {
            case .audioContinuous:
                let duration = event.effectiveDuration
                guard duration > 0 else { continue }
                voices.append(Self.voice(event, index, .tone, duration: duration, shaped: true, controls: controls))
            case .audioCustom:
                guard let waveform = event.audioWaveform else { continue }
                guard let clipDuration = clipDurations[waveform] else {
                    missing.append(waveform)
                    continue
                }
                let duration = Self.customDuration(event, clipDuration: clipDuration, controls: controls)
                guard duration > 0 else { continue }
                let shaped = event.waveformUsesVolumeEnvelope ?? false
                voices.append(
                    Self.voice(event, index, .clip(waveform), duration: duration, shaped: shaped, controls: controls))
            case .hapticTransient, .hapticContinuous:
                continue
            }
        }
        self.voices = voices
        self.missingClips = missing
        self.controls = controls
    }

    /// When the last voice ends, in pattern seconds (0 without voices).
    public var end: Double { voices.map(\.end).max() ?? 0 }

    /// `EventDuration` when given, capped as continuous events are; otherwise the file once at the rate of the
    /// pitch the event starts with.
    private static func customDuration(_ event: HapticEvent, clipDuration: Double, controls: AudioControls) -> Double {
        if event.effectiveDuration > 0 { return event.effectiveDuration }
        let pitch = controls.pitch(event.effectiveValue(of: .audioPitch), at: event.relativeTime)
        return Swift.min(clipDuration / AudioMapping.playbackRate(pitch: pitch), HapticEvent.maximumContinuousDuration)
    }

    private static func voice(
        _ event: HapticEvent, _ index: Int, _ source: AudioVoice.Source, duration: Double, shaped: Bool,
        controls: AudioControls
    ) -> AudioVoice {
        let start = event.relativeTime
        let envelope: GainEnvelope
        if shaped {
            let decay = controls.seconds(event.decayTime, .audioDecayTimeControl, at: start)
            envelope = .continuous(
                start: start, duration: duration,
                attack: controls.seconds(event.attackTime, .audioAttackTimeControl, at: start),
                decay: event.isSustained ? nil : Swift.max(decay, AudioMapping.shortestDecay),
                release: controls.seconds(event.releaseTime, .audioReleaseTimeControl, at: start + duration))
        } else {
            envelope = GainEnvelope(corners: [(start, 1), (start + duration, 1)])
        }
        return AudioVoice(
            source: source, eventIndex: index, envelope: envelope, volume: event.effectiveValue(of: .audioVolume),
            pan: event.effectiveValue(of: .audioPan), pitch: event.effectiveValue(of: .audioPitch),
            brightness: event.effectiveValue(of: .audioBrightness), loops: event.waveformLoopEnabled ?? false)
    }
}

/// The audio controls of a pattern over pattern time, one schedule each (the most recently started parameter
/// or curve wins, as for the haptic controls).
package struct AudioControls: Sendable {
    private var schedules: [HapticDynamicParameter.ID: ControlSchedule] = [:]

    private static let ids: [HapticDynamicParameter.ID] = [
        .audioVolumeControl, .audioPanControl, .audioPitchControl, .audioBrightnessControl,
        .audioAttackTimeControl, .audioDecayTimeControl, .audioReleaseTimeControl,
    ]

    init(parameters: [HapticDynamicParameter], curves: [HapticParameterCurve]) {
        for id in Self.ids { schedules[id] = ControlSchedule(id: id) }
        for parameter in parameters where schedules[parameter.parameterID] != nil {
            schedules[parameter.parameterID]?.add(parameter)
        }
        for curve in curves where schedules[curve.parameterID] != nil { schedules[curve.parameterID]?.add(curve) }
        for id in Self.ids { schedules[id]?.sort() }
    }

    /// The control's value at `time` (its neutral value when nothing sets it).
    func value(_ id: HapticDynamicParameter.ID, at time: Double) -> Double {
        schedules[id]?.value(at: time, piece: time) ?? id.defaultValue ?? 0
    }

    /// An event value with control `id` applied at `time`, as Core Haptics combines them (multiplied for volume,
    /// added otherwise, clamped to the event parameter's range).
    func applied(_ id: HapticDynamicParameter.ID, to eventValue: Double, at time: Double) -> Double {
        id.apply(value(id, at: time), to: eventValue)
    }

    func pitch(_ eventValue: Double, at time: Double) -> Double {
        applied(.audioPitchControl, to: eventValue, at: time)
    }

    /// Seconds of an envelope adjuster with its time control added (`EnvelopeTiming`, as for haptics).
    func seconds(_ adjuster: Double, _ id: HapticDynamicParameter.ID, at time: Double) -> Double {
        EnvelopeTiming.seconds(forAdjuster: adjuster + value(id, at: time))
    }
}
