// A player's pattern, rendered: the renderer (HapticRendering) turns a pattern plus its run-time controls into
// a MotorTimeline; the engine renders again when a player receives parameters or a curve. A pattern with sound
// also carries its decoded clips, and its player lasts until its last sound ends, as a Core Haptics pattern's
// duration covers its audio events.
import AHAP
import AudioRendering
import HapticRendering

struct PatternSource: Sendable {
    let pattern: HapticPattern
    /// The renderer for the device the engine plays on (`EngineCore.patternRenderer(for:)`): a player made before
    /// the engine knew its device is rendered again with that device's (`PlayerState.rendering(with:)`).
    private(set) var renderer: PatternRenderer
    /// The pattern's sound, when it has audio events and the engine plays audio.
    let audio: PatternAudio?
    /// The pattern time its haptic events last to (`HapticEvent.logicalDuration`): a player lasts that long at
    /// least, and loops there, where its motors stop earlier (a transient padded by its `EventDuration`, a
    /// continuous event at intensity 0), as a Core Haptics pattern's end and loop point are its events'.
    let eventsEnd: Double

    init(pattern: HapticPattern, renderer: PatternRenderer, audio: PatternAudio? = nil) {
        self.pattern = pattern
        self.renderer = renderer
        self.audio = audio
        eventsEnd =
            pattern.hapticEvents.lazy.filter { HapticPattern.isWithinTimeBound($0.relativeTime) }
            .map { $0.relativeTime + $0.logicalDuration }.max() ?? 0
    }

    /// The same pattern and sound, rendered by `renderer`.
    func rendered(by renderer: PatternRenderer) -> PatternSource {
        var source = self
        source.renderer = renderer
        return source
    }

    /// The pattern rendered with `controls`: its motor timeline, and when its last sound ends (pattern time; 0
    /// without sound). The whole pattern's work: the engine does it outside its lock.
    func rendered(with controls: RuntimeControls) -> RenderedControls {
        RenderedControls(
            controls: controls, timeline: renderer.render(pattern, controls: controls),
            soundEnd: audioSchedule(controls)?.end ?? 0)
    }

    func audioSchedule(_ controls: RuntimeControls) -> AudioSchedule? {
        audio?.schedule(of: pattern, controls: controls)
    }
}

/// Run-time controls and what a player's pattern is with them (`PatternSource.rendered`).
struct RenderedControls: Sendable {
    var controls: RuntimeControls
    var timeline: MotorTimeline
    var soundEnd: Double
}

/// A pattern's decoded clips, at the rate of the engine's sound output.
struct PatternAudio: Sendable {
    /// Clips by what `AudioCustom` events play (a file's path, a registered resource), converted to `sampleRate`.
    let clips: [AudioWaveform: AudioClip]
    let sampleRate: Int

    func schedule(of pattern: HapticPattern, controls: RuntimeControls) -> AudioSchedule {
        AudioSchedule(pattern: pattern, clipDurations: clips.mapValues(\.duration), controls: controls)
    }
}

/// What a player's sound is while it plays: it changes (and a new sound replaces the old) when the player is
/// started, resumed, sought, changes rate or loop, or receives controls; not while it simply plays on.
struct SoundAnchor: Sendable, Hashable {
    /// The engine time the player's offset (before loop wrapping) was `offset` at.
    var time: Double
    var offset: Double
    var rate: Double
    var loopLength: Double?
    /// `PlayerState.controlsRevision`: bumped by every change to the player's controls.
    var revision: Int

    /// The pattern offset at engine time `time`, wrapped into the loop.
    func offset(at moment: Double) -> Double {
        PlayerState.wrapped(offset + (moment - time) * rate, loopLength: loopLength)
    }
}

/// A sound a player makes: from its anchor until `end` (engine time; nil: until it ends by itself), with the
/// run-time controls it plays with.
struct SoundCue: Sendable, Hashable {
    var anchor: SoundAnchor
    var end: Double?
    var controls = RuntimeControls.none

    /// The same cue anchored at engine time `time` (not before its anchor), where its player is then: it plays
    /// the same from there on.
    func resumed(at time: Double) -> SoundCue {
        var cue = self
        cue.anchor.offset = anchor.offset(at: time)
        cue.anchor.time = time
        return cue
    }
}

/// A control as a player received it, placed in pattern time (`RuntimeControls`' forms): kept while it is held for
/// a later time, so that it can be applied again on top of a control sent after it for an earlier time.
enum SentControl: Sendable, Hashable {
    case parameters([HapticDynamicParameter], patternTime: Double, fromEachPassStart: Bool)
    case curve(HapticParameterCurve, patternTime: Double)

    /// Where in the pattern it is placed.
    var patternTime: Double {
        switch self {
        case .parameters(_, let patternTime, _), .curve(_, let patternTime): patternTime
        }
    }

    /// The same control placed at `patternTime` (on a looping player, `loops`: a parameter then also acts from the
    /// start of each pass).
    func placed(at patternTime: Double, loops: Bool) -> SentControl {
        switch self {
        case .parameters(let parameters, _, _):
            .parameters(parameters, patternTime: patternTime, fromEachPassStart: loops)
        case .curve(let curve, _): .curve(curve, patternTime: patternTime)
        }
    }

    /// `controls` with this one sent.
    func applied(to controls: RuntimeControls) -> RuntimeControls {
        var changed = controls
        switch self {
        case .parameters(let parameters, let patternTime, let fromEachPassStart):
            changed.send(parameters, atPatternTime: patternTime, fromEachPassStart: fromEachPassStart)
        case .curve(let curve, let patternTime):
            changed.schedule(curve, atPatternTime: patternTime)
        }
        return changed
    }
}

/// A control a player holds until the engine time it was sent for (`PlayerState.heldControls`), with the player's
/// controls then (those before it and it) and the pattern rendered with them.
struct HeldControl: Sendable {
    var time: Double
    var sent: SentControl
    var rendered: RenderedControls
}

/// A player's pattern to be rendered again by another renderer (`PlayerState.rendering(with:)`): outside the
/// engine's lock, with its controls and then each held control's, and made by `PlayerState.take` unless a change of
/// its controls reached the player meanwhile.
struct Rerendering: Sendable {
    /// `PlayerState.controlChanges` when it was worked out.
    var basis: Int
    /// The player's pattern and sound with the new renderer.
    var source: PatternSource
    /// The player's controls, then those of each held control, in order.
    var controls: [RuntimeControls]

    /// Each of `controls` rendered: the work, outside the lock.
    func rendered() -> [RenderedControls] { controls.map { source.rendered(with: $0) } }
}

/// A change of a player's controls, worked out under the engine's lock (`PlayerState.controlsChange`), rendered
/// outside it, and made by `PlayerState.take` unless another change reached the player meanwhile.
struct ControlsChange: Sendable {
    /// `PlayerState.controlChanges` when it was worked out.
    var basis: Int
    /// The engine time the control sent is held for; nil: it acts at once.
    var time: Double?
    /// The control sent; nil for the held controls placed again (`PlayerState.heldControlsPlacedAgain`).
    var sent: SentControl?
    /// Where it goes among the held controls; those from there on act after it.
    var index: Int
    /// The held controls from `index` on (after the one sent, when it is held too) that change, as they are to be;
    /// those after them stay as they are.
    var held: [SentControl]
    /// The controls from the sent control's time on (when there is one), then those of each of `held`, each
    /// rebuilt on top of the one before.
    var controls: [RuntimeControls]
}
