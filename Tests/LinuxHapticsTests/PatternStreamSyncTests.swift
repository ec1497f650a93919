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

        final class Output: InertOutput, PatternStreamOutput {
            let source: NotingStreamSource
            init(source: NotingStreamSource) { self.source = source }
            var capabilities: OutputCapabilities {
                OutputCapabilities(name: "noting stream", isVirtual: true, renderProfile: .genericRumble)
            }
            func close() {}
            func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
                source.synced.withLock { $0.append(players) }
            }
            func prepare(_ pattern: HapticPattern) {}
            var activity: ActuatorActivity { .atRest }
            func activity(at time: Double) -> ActuatorActivity { .atRest }
            var streamCounts: (reports: Int, underruns: Int) { (0, 0) }
            var startLead: Double { 0 }
        }
    }

    /// An engine asked for HD actuators on a noting stream, half a second into a two-second tone's player.
    private static func aToneHalfASecondIn() throws -> (
        NotingStreamSource, ManualClock, HapticEngine, any HapticPatternPlayer
    ) {
        let source = NotingStreamSource()
        let clock = ManualClock(startingAt: 10)
        var options = HapticEngineOptions()
        options.actuators = .hd
        let engine = HapticEngine(
            output: HapticOutputSelection(source: source), options: options, clock: clock, logger: quietLogger())
        try engine.start()
        let player = try engine.makePlayer(with: AHAPFixtures.tone(seconds: 2))
        try player.start(atTime: 0)
        clock.advance(by: 0.5)
        return (source, clock, engine, player)
    }

    /// A muted player is still given to the stream, marked muted, with the cues it plays on with: unmuted, its cue
    /// is the same one, which the stream knows began before (until 7 December a muted player was left out, and the
    /// voice coils took its cue for a start at its unmute).
    @Test func aMutedPlayerIsGivenToTheStreamMarkedMutedWithItsCues() throws {
        let (source, clock, engine, player) = try Self.aToneHalfASecondIn()
        defer { withExtendedLifetime(engine) {} }
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
        let (source, clock, engine, player) = try Self.aToneHalfASecondIn()
        defer { withExtendedLifetime(player) {} }
        let playing = try #require(source.last?.values.first)
        engine.isMutedForHaptics = true
        clock.advance(by: 0.1)
        let muted = try #require(source.last?.values.first)
        #expect(muted.isMuted && muted.cues == playing.cues)
    }
}
