import Foundation
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Testing

@testable import haptics

/// `haptics play` end to end (`CLI`): what it says when it cannot find the pattern it was given, or cannot play it
/// where it was asked to.
@Suite struct PlayCommandTests {
    @Test func aMissingPathIsReportedAsAPathAndAMissingNameAsANameInTheFolder() throws {
        let path = try CLI.run(["play", "--device", "virtual", "/nonexistent/tap.ahap"])
        #expect(path.status != 0)
        #expect(path.output.isEmpty, "nothing plays")
        #expect(
            path.errors.hasPrefix(
                "haptics play: cannot find the pattern /nonexistent/tap.ahap: no file "
                    + "/nonexistent/tap.ahap\n"), "\(path.errors)")
        #expect(path.errors.contains("Check the path."), "\(path.errors)")
        let name = try CLI.run(["play", "--device", "virtual", "no-such-pattern"])
        #expect(name.status != 0)
        #expect(
            name.errors.hasPrefix(
                "haptics play: cannot find the pattern no-such-pattern: no file no-such-pattern, and no "
                    + "no-such-pattern.ahap in "), "\(name.errors)")
        #expect(name.errors.contains("set HAPTICS_DIR"), "\(name.errors)")
    }

    /// HAPTICS_DIR overrides every other folder: set to one that is not there, it finds nothing (rather than
    /// ./Haptics or the repository's, which the user did not mean), and the error says why.
    @Test func aHapticsDirThatIsNotAFolderIsNamedInTheErrorAndNothingElseIsSearched() throws {
        let result = try CLI.run(
            ["play", "--device", "virtual", "thud"], environment: ["HAPTICS_DIR": "/nonexistent/Haptics"])
        #expect(result.status != 0)
        #expect(result.output.isEmpty, "nothing plays")
        #expect(
            result.errors.hasPrefix(
                "haptics play: cannot find the pattern thud: no file thud, and HAPTICS_DIR is set to "
                    + "/nonexistent/Haptics, which is not a folder\n"), "\(result.errors)")
        #expect(result.errors.contains("Point HAPTICS_DIR at the folder"), "\(result.errors)")
        let replay = try CLI.run(
            ["replay", "--device", "virtual"], environment: ["HAPTICS_DIR": "/nonexistent/Haptics"])
        #expect(replay.status != 0)
        #expect(
            replay.errors.contains("HAPTICS_DIR is set to /nonexistent/Haptics, which is not a folder"),
            "\(replay.errors)")
    }

    @Test func aTriggerLocalityOnTheVirtualOutputFailsAndPlaysNothing() throws {
        for locality in ["triggers", "left-trigger", "right-trigger"] {
            let result = try CLI.run(["play", "--device", "virtual", "--locality", locality, "thud"])
            #expect(result.status == 1, "\(locality): \(result.errors)")
            #expect(result.output.isEmpty, "\(locality): nothing plays: \(result.output)")
            #expect(
                result.errors.hasPrefix(
                    "haptics play: cannot play on virtual: the virtual output has no trigger motors, so locality "
                        + "\(locality) cannot play on it"), "\(result.errors)")
            #expect(result.errors.contains("Play on the body motors"), "\(result.errors)")
        }
    }

    /// A sound device named for a pattern without audio events is not opened, so a typo in it would go unseen:
    /// the play says the option is not used, and plays.
    @Test func anAudioDeviceForAPatternWithoutAudioIsSaidToBeUnused() throws {
        let result = try CLI.run(["play", "--device", "virtual", "--json", "--audio-device", "nosuch", "thud"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            result.output.hasPrefix(
                #"{"event":"note","message":"--audio-device nosuch is not used: the pattern has no audio events"}"#
            ), "\(result.output)")
        #expect(result.output.contains(#"{"event":"finished"}"#), "\(result.output)")
    }

    /// The `path` of the started line: trigger motors play motor levels (through the pad's hidraw node), not a stream
    /// of samples or bands as voice coils and HD rumble do (it said `hd-stream` for them until 6 December).
    @Test func theStartedPathOfTriggerMotorsIsMotorLevels() {
        var capabilities = OutputCapabilities(name: "Xbox Wireless Controller", isVirtual: false)
        #expect(PlaySession.path(capabilities) == "motor-levels")
        capabilities.hdNode = "/dev/hidraw0"
        for (kind, path) in [
            (HDActuators.Kind.voiceCoils, "hd-stream"), (.hdRumble, "hd-stream"), (.triggerMotors, "motor-levels"),
        ] {
            capabilities.hdKind = kind
            #expect(PlaySession.path(capabilities) == path, "\(kind)")
        }
        capabilities.playsPeriodicEffects = true
        #expect(PlaySession.path(capabilities) == "periodic-effects")
    }

    /// What the library warns of while a command plays (a pattern's sound file that is missing) is one of the
    /// command's notes: a `note` event with --json, a `haptics play:` line otherwise. It was a timestamped log line
    /// on standard error, and no JSON event, until 6 December.
    @Test func aMissingSoundFileIsANoteNotALogLine() throws {
        let pattern = try AHAPFixtures.file("audio-events.ahap").path
        let json = try CLI.run(["play", "--device", "virtual", "--json", pattern])
        #expect(json.status == 0, "\(json.errors)")
        #expect(
            json.output.hasPrefix(
                #"{"event":"note","message":"an audio event's file cannot be played: missing-sound.wav: no such file"#),
            "\(json.output)")
        #expect(json.errors.isEmpty, "\(json.errors)")
        let text = try CLI.run(["play", "--device", "virtual", pattern])
        #expect(
            text.errors.hasPrefix("haptics play: an audio event's file cannot be played: missing-sound.wav"),
            "\(text.errors)")
    }

    /// `--loop 0` holds until interrupted whatever the pattern lasts, as a script that plays a pattern for as long
    /// as it runs expects: a pattern of 0 s (a continuous event of no duration) printed `finished` and exited at
    /// once, until 7 December. It says that nothing plays, and SIGTERM ends it with 143.
    @Test func loopZeroOfAPatternOfNoLengthHoldsUntilInterrupted() throws {
        try CLI.withFile(
            #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0,"#
                + #""EventParameters":[]}}]}"#
        ) { path in
            let run = try CLI.run(
                [
                    "-c", "exec timeout --preserve-status 2 \"$0\" play \"$1\" --device virtual --loop 0 --json",
                    try CLI.binary().path, path,
                ],
                through: "/bin/sh")
            #expect(run.status == 143, "\(run.output)\(run.errors)")
            #expect(!run.output.contains(#""event":"finished""#), "\(run.output)")
            #expect(run.output.contains(#""event":"interrupted""#), "\(run.output)")
            #expect(run.output.contains("lasts 0 s"), "\(run.output)")
        }
    }

    /// On a terminal `play` redraws its live line (`\r\e[K`, then the line) 20 times a second; each one fits in the
    /// terminal's width less a column. It was 85 columns whatever the terminal, so on an 80-column one every redraw
    /// wrapped, the erase reached only its second row, and each left a line behind, until 7 December. `script` gives
    /// the command a terminal, which `stty` sets to the width tested.
    @Test(arguments: [80, 40])
    func theLiveLineFitsTheTerminalsWidth(columns: Int) throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let run = try CLI.run(
            [
                "-qec",
                "stty cols \(columns) rows 24 && exec \(try CLI.binary().path) play thud --device virtual --loop 2",
                "/dev/null",
            ], in: repository, through: "/usr/bin/script")
        let redraws = run.output.components(separatedBy: "\r\u{1b}[K").dropFirst()
            .filter { !$0.contains("\n") && !$0.isEmpty }
        #expect(run.status == 0, "\(run.output)")
        #expect(!redraws.isEmpty, "\(run.output)")
        let widest = redraws.map(\.count).max() ?? 0
        #expect(widest <= columns - 1, "a redraw of \(widest) columns: \(redraws.first ?? "")")
    }
}
