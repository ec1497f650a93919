// What the engine gives a stream that plays its patterns (voice coils, HD rumble, periodic effects): every player,
// muted or not, with its cues, so that the stream tells a cue heard again after a mute from a start.
import AHAP
import HapticRendering
import HapticTestDevices
@testable import LinuxHaptics
@_spi(Internals) import LinuxSystem
import LinuxHapticsTesting
import Logging
import Testing

@Suite struct PatternStreamSyncTests {
    /// A source whose output is a pattern stream that notes every sync and plays nothing.
    private final class NotingStreamSource: OutputSource {
        let synced = Lock<[[PlayerID: WaveformPlayer]]>([])

        func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
            Output(source: self)
        }

        func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
            nil
        }

        /// The players of the last sync.
        var last: [PlayerID: WaveformPlayer]? { synced.withLock { $0.last } }

        final class Output: PatternStreamOutput {
            let source: NotingStreamSource
            init(source: NotingStreamSource) { self.source = source }
            var capabilities: OutputCapabilities {
                OutputCapabilities(name: "noting stream", isVirtual: true, renderProfile: .genericRumble)
            }
            func sendNeutral() throws(OutputFailure) {}
            func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {}
            func keepAlive() throws(OutputFailure) {}
            func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
                throw OutputFailure(.unsupported, "no prepared pulses")
            }
            func trigger(prepared id: Int) throws(OutputFailure) {}
            func stop(prepared id: Int) throws(OutputFailure) {}
            func release(prepared id: Int) {}
            func currentLevels() -> MotorMagnitudes? { nil }
            func close() {}
            func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
                source.synced.withLock { $0.append(players) }
            }
            func prepare(_ pattern: HapticPattern) {}
            var activity: ActuatorActivity { ActuatorActivity(left: 0, right: 0, frequency: nil) }
            var streamCounts: (reports: Int, underruns: Int) { (0, 0) }
            var startLead: Double { 0 }
        }
    }

    private static func engine(_ source: NotingStreamSource, clock: ManualClock) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.actuators = .hd
        let engine = HapticEngine(
            output: HapticOutputSelection(source: source), options: options, clock: clock, logger: quietLogger())
        try engine.start()
        return engine
    }

    /// A muted player is still given to the stream, marked muted, with the cues it plays on with: unmuted, its cue
    /// is the same one, which the stream knows began before (until 7 December a muted player was left out, and the
    /// voice coils took its cue for a start at its unmute).
    @Test func aMutedPlayerIsGivenToTheStreamMarkedMutedWithItsCues() throws {
        let source = NotingStreamSource()
        let clock = ManualClock(startingAt: 10)
        let engine = try Self.engine(source, clock: clock)
        let player = try engine.makePlayer(with: AHAPFixtures.tone(seconds: 2))
        try player.start(atTime: 0)
        clock.advance(by: 0.5)
        let playing = try #require(source.last?.values.first)
        #expect(!playing.isMuted && playing.cues.count == 1)
        player.isMuted = true
        clock.advance(by: 0.1)
        let muted = try #require(source.last?.values.first)
        #expect(muted.isMuted && muted.cues == playing.cues, "muted, the player is given with its cues")
        player.isMuted = false
        clock.advance(by: 0.1)
        #expect(source.last?.values.first.map { !$0.isMuted && $0.cues == playing.cues } == true)
    }

    /// The same for the engine's haptics muted: every player is given, marked muted.
    @Test func anEngineMutedForHapticsGivesItsPlayersToTheStreamMarkedMuted() throws {
        let source = NotingStreamSource()
        let clock = ManualClock(startingAt: 10)
        let engine = try Self.engine(source, clock: clock)
        let player = try engine.makePlayer(with: AHAPFixtures.tone(seconds: 2))
        try player.start(atTime: 0)
        clock.advance(by: 0.5)
        let playing = try #require(source.last?.values.first)
        engine.isMutedForHaptics = true
        clock.advance(by: 0.1)
        let muted = try #require(source.last?.values.first)
        #expect(muted.isMuted && muted.cues == playing.cues)
    }
}
