import Foundation
import Glibc
import Testing

@testable import haptics

/// What every command shares: how ArgumentParser's own outcomes (help, usage errors) reach the user beside the
/// commands' failures, which `haptics` prints itself.
struct CommandLineTests {
    @Test func theHelpCommandPrintsTheSubcommandsHelpAndExitsZero() throws {
        let run = try CLI.run(["help", "probe"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("OVERVIEW: Describe one input device"))
        #expect(run.errors.isEmpty)
    }

    /// A USB gadget's driver names it by the real pad's USB strings: a name asked for would be silently lost.
    @Test(arguments: ["xbox360", "dragonrise", "pid-joystick"])
    func aNameForAnEmulatedUSBGadgetIsAUsageError(model: String) throws {
        let run = try CLI.run(["emulate", model, "--name", "Mine"])
        #expect(run.status == 64)
        #expect(run.errors.hasPrefix("Error: --name is for the uhid models: \(model) is a USB gadget"), "\(run.errors)")
    }

    /// A device that is not there is the command's failure, in its words: `haptics probe: what failed`, why when
    /// there is a reason, then what to do on a line of its own; nothing on standard output, status 1. (What each
    /// line says on a system with devices, with none, or without /dev/input: `SystemFactsTests`.)
    @Test func aDeviceThatIsNotThereIsSaidAsTheCommandsFailure() throws {
        let run = try CLI.run(["probe", "/dev/input/event999"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        let lines = run.errors.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines.last == "", "\(run.errors)")
        #expect(lines.first?.hasPrefix("haptics probe: no input device \"/dev/input/event999\"") == true)
        let virtual = try CLI.run(["probe", "virtual"])
        #expect(virtual.status == 1)
        #expect(virtual.errors.hasPrefix("haptics probe: no input device \"virtual\": 'virtual' names an output"))
    }

    /// A time too long to sleep for (it trapped converting to nanoseconds) or not a number is a usage error.
    @Test(arguments: ["inf", "1e300", "1e19", "2e20", "nan", "0", "-1"])
    func monitorForOutsideAYearIsAUsageError(duration: String) throws {
        let run = try CLI.run(["monitor", "--for=\(duration)"])
        #expect(run.status == 64, "\(run.errors)")
        #expect(
            run.errors.hasPrefix("Error: --for takes a positive number of seconds, at most 31622400"), "\(run.errors)")
    }

    /// A bind timeout that is not a positive number of seconds at most an hour is a usage error, before any device is
    /// made: it trapped (SIGILL) converting to nanoseconds once the controller existed, until 6 December.
    @Test(arguments: ["-1", "nan", "inf", "1e300", "0", "3601"])
    func emulateBindTimeoutOutsideAnHourIsAUsageError(seconds: String) throws {
        let run = try CLI.run(["emulate", "dualsense", "--bind-timeout=\(seconds)"])
        #expect(run.status == 64, "\(run.errors)")
        #expect(
            run.errors.hasPrefix("Error: --bind-timeout takes a positive number of seconds, at most 3600"),
            "\(run.errors)")
    }

    /// A rate below the engine's slowest is a usage error: the engine played it at 0.01 while the command waited
    /// for the pattern's end at the rate asked (`--rate 1e-300`: for ever), until 6 December.
    @Test(arguments: ["1e-300", "0.009", "0", "-1", "nan", "inf"])
    func aRateBelowTheEnginesSlowestIsAUsageError(rate: String) throws {
        let run = try CLI.run(["play", "thud", "--rate", rate])
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.hasPrefix("Error: --rate must be a number of at least 0.01"), "\(run.errors)")
    }

    /// A negative number after an option is its value, judged by the option's own rule: the argument parser took
    /// `-1` for an option and said the value was missing, until 6 December.
    @Test(arguments: [
        (["play", "thud", "--loop", "-1"], "Error: --loop must be 0 (forever) or more"),
        (["monitor", "--for", "-1"], "Error: --for takes a positive number of seconds"),
        (["render", "thud", "--sample-rate", "-5"], "Error: --sample-rate must be more than 0 and at most 100000 Hz"),
        (["feedback", "impact", "heavy", "--intensity", "-0.5"], "Error: --intensity must be within 0...1"),
        (["emulate", "dualsense", "--bind-timeout", "-1"], "Error: --bind-timeout takes a positive number of seconds"),
    ])
    func aNegativeNumberIsTheOptionsValueAndItsRuleSaysWhatIsWrong(arguments: [String], message: String) throws {
        let run = try CLI.run(arguments)
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.hasPrefix(message), "\(run.errors)")
    }

    /// A Sony pad's `--uniq` is its Bluetooth address: anything else was taken silently and the default address used.
    @Test func emulateASonyPadWithAUniqThatIsNoAddressIsAUsageError() throws {
        let run = try CLI.run(["emulate", "dualsense-bt", "--uniq", "notamac"])
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.hasPrefix("Error: --uniq of a Sony pad is its Bluetooth address"), "\(run.errors)")
    }

    /// A style that is not one is said to be unknown, with the styles; none at all is said to be missing.
    @Test func feedbackImpactSaysAnUnknownStyleIsUnknownAndAMissingOneMissing() throws {
        let unknown = try CLI.run(["feedback", "impact", "bogus"])
        #expect(unknown.status == 64)
        #expect(
            unknown.errors.hasPrefix(
                "Error: no impact style \"bogus\": the styles are light, medium, heavy, soft, rigid"),
            "\(unknown.errors)")
        let missing = try CLI.run(["feedback", "impact"])
        #expect(missing.status == 64)
        #expect(missing.errors.hasPrefix("Error: impact needs a STYLE: light"), "\(missing.errors)")
    }

    /// Asked for the udev daemon's events, the monitor says it will hear nothing, and what to pass, exactly when this
    /// system runs no udev daemon. (Both cases on any machine: `SystemFactsTests`.)
    @Test func monitorWithTheUdevSourceWarnsJustWhenThisSystemRunsNoUdevDaemon() throws {
        let run = try CLI.run(["monitor", "--source", "udev", "--for", "0.2"])
        #expect(run.status == 0, "\(run.errors)")
        let daemon = FileManager.default.fileExists(atPath: "/run/udev/control")
        #expect(run.errors.contains("warning: no udev daemon runs") == !daemon, "\(run.errors)")
    }

    /// A misspelt subcommand is a usage error (status 64) that says which word names no subcommand of which
    /// command, and the subcommand it likely meant, with the others.
    @Test func aMisspeltSubcommandIsSaidWithTheNearestOneAndStatus64() throws {
        let subcommands =
            "virtual-pad, emulate, devices, probe, monitor, validate, render, play, replay, feedback, audio"
        let play = try CLI.run(["plya", "x.ahap"])
        #expect(play.status == 64)
        #expect(play.output.isEmpty)
        #expect(
            play.errors == "haptics: unknown subcommand \"plya\": haptics has no subcommand of that name\n"
                + "Did you mean `haptics play`? `haptics --help` lists them all: \(subcommands).\n")
        // After `help` too: it printed the help of the command above with status 0, until 6 December.
        let help = try CLI.run(["help", "audio", "plya"])
        #expect(help.status == 64)
        #expect(help.output.isEmpty)
        #expect(help.errors.hasPrefix("haptics audio: unknown subcommand \"plya\""), "\(help.errors)")
        #expect(try CLI.run(["help", "audio", "play"]).status == 0)
        let probe = try CLI.run(["prob"])
        #expect(probe.status == 64)
        #expect(probe.errors.contains("Did you mean `haptics probe`?"), "\(probe.errors)")
        let audio = try CLI.run(["audio", "plya", "song.wav"])
        #expect(audio.status == 64)
        #expect(
            audio.errors
                == "haptics audio: unknown subcommand \"plya\": haptics audio has no subcommand of that name\n"
                + "Did you mean `haptics audio play`? `haptics audio --help` lists them all: devices, play.\n")
    }

    /// A word near no subcommand is said as such, with every subcommand to choose from.
    @Test func aWordNearNoSubcommandIsAUsageErrorThatListsThemAll() throws {
        let run = try CLI.run(["x.ahap"])
        #expect(run.status == 64)
        #expect(
            run.errors == "haptics: unknown subcommand \"x.ahap\": haptics has no subcommand of that name\n"
                + "Use one of virtual-pad, emulate, devices, probe, monitor, validate, render, play, replay, "
                + "feedback, audio: `haptics --help` says what each does.\n")
    }

    /// Standard output on a full disk (`/dev/full`): the command fails, saying so, rather than exit with 0 and a
    /// truncated file.
    @Test(arguments: [["render", "thud", "--format", "csv"], ["validate", "--json", "thud.ahap"]])
    func aWriteToStandardOutputThatFailsFailsTheCommand(arguments: [String]) throws {
        let haptics = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Haptics")
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = arguments.map { $0.hasSuffix(".ahap") ? haptics.appendingPathComponent($0).path : $0 }
        process.environment = ProcessInfo.processInfo.environment.merging(["HAPTICS_DIR": haptics.path]) { $1 }
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
        let errorPipe = Pipe()
        process.standardError = errorPipe
        try process.run()
        let errors = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(errors.contains("haptics \(arguments[0]): writing to standard output failed: "), "\(errors)")
    }

    /// A name with an escape sequence or a line break in it (a file's name) is written escaped in a failure: it
    /// was printed raw, so that it could recolour or clear the terminal and split the message, until 6 December.
    @Test(arguments: [
        ["play", "x\u{1b}[31mred\ny"], ["audio", "play", "/x\u{1b}[2J.wav"], ["replay", "--cues", "/x\u{1b}[2J"],
    ])
    func aNameWithHiddenCharactersIsWrittenEscaped(arguments: [String]) throws {
        let run = try CLI.run(arguments)
        #expect(run.status == 1)
        #expect(!run.errors.contains("\u{1b}"), "\(run.errors)")
        #expect(run.errors.contains(#"\u001b["#), "\(run.errors)")
        #expect(run.errors.split(separator: "\n").count == 2, "what failed, then what to do: \(run.errors)")
    }

    /// An output path that cannot take what is written to it is a usage error before anything runs: a FIFO as the
    /// voice coils' WAV waited for a reader, then failed; `emulate`'s WAV, written when the controller is removed,
    /// was found unwritable only then, losing the session; an empty pad name failed when the pad was made (until 6
    /// December).
    @Test func anOutputPathThatCannotTakeTheFileIsAUsageErrorAtOnce() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let render = try CLI.run(["render", "thud", "--actuators", "hd", "--format", "wav", "--output", fifo])
        #expect(render.status == 64)
        #expect(
            render.errors.hasPrefix("Error: --format wav writes a regular file, and \(fifo) is not"), "\(render.errors)"
        )
        let emptyName = try CLI.run(["virtual-pad", "--name", ""])
        #expect(emptyName.status == 64)
        #expect(emptyName.errors.hasPrefix("Error: --name must not be empty"), "\(emptyName.errors)")
        let emulate = try CLI.run(["emulate", "dualsense-bt", "--haptics-wav", "/nonexistent/folder/pad.wav"])
        #expect(emulate.status == 64)
        #expect(
            emulate.errors.hasPrefix(
                "Error: --haptics-wav: /nonexistent/folder is not a folder this user may write in"),
            "\(emulate.errors)")
    }

    /// A file the kernel makes up is no output: what is written to it is an order to the kernel (as root, `render
    /// --output /proc/sys/vm/drop_caches` wrote a rendering there). A usage error before anything is written, for
    /// every format (a text rendering was written into the `/proc` file, a WAV refused only as no regular file) and
    /// for the records of `virtual-pad` and `emulate` and `emulate`'s WAV, whose commands are only parsed here.
    @Test func anOutputFileTheKernelMakesUpIsAUsageErrorBeforeAnythingIsWritten() throws {
        let file = "/proc/self/status"
        try #require(FileManager.default.fileExists(atPath: file), "/proc is not mounted")
        let why = "it is made up by the kernel as it is read (a /proc file), not a regular file"
        for format in [["--format", "text"], ["--actuators", "hd", "--format", "wav"]] {
            let render = try CLI.run(["render", "thud", "--output", file] + format)
            #expect(render.status == 64, "\(format): \(render.errors)")
            #expect(
                render.errors.hasPrefix(
                    "Error: --output does not write to \(file): \(why), and what is written to it goes to the kernel; "
                        + "name a file of your own"), "\(format): \(render.errors)")
        }
        let records: [(String, () throws -> Void)] = [
            ("virtual-pad", { _ = try VirtualPadCommand.parse(["--record", file]) }),
            ("emulate", { _ = try EmulateCommand.parse(["dualsense-bt", "--record", file]) }),
        ]
        for (command, parse) in records {
            let refusal = Self.refusal(parse)
            #expect(refusal.hasPrefix("--record does not write to \(file): \(why)"), "\(command): \(refusal)")
        }
        let wav = Self.refusal { _ = try EmulateCommand.parse(["dualsense-bt", "--haptics-wav", file]) }
        #expect(wav.hasPrefix("--haptics-wav names \(file), which is no regular file: \(why)"), "\(wav)")
    }

    /// An output named through a descriptor that leads to a pipe (`/dev/fd/1`, `/proc/self/fd/1`, bash's `>(...)`)
    /// is written: its link in /proc leads to no file, and is none the kernel makes up. The check refused it as "a
    /// /proc file" when it came in on 7 December, for the morning.
    @Test(arguments: ["/dev/fd/1", "/proc/self/fd/1"])
    func anOutputNamedThroughADescriptorLeadingToAPipeIsWritten(output: String) throws {
        let render = try CLI.run(["render", "thud", "--format", "csv", "--output", output])
        #expect(render.status == 0, "\(render.errors)")
        #expect(render.output.hasPrefix("time,"), "\(render.output.prefix(80))")
    }

    /// What `parse` throws, in ArgumentParser's words; "none" when it throws nothing.
    private static func refusal(_ parse: () throws -> Void) -> String {
        do {
            try parse()
            return "none"
        } catch {
            return Haptics.message(for: error)
        }
    }

    /// ArgumentParser read `-broken.ahap` as short options, `-h` among them, and `validate` showed the help with
    /// status 0, checking nothing.
    @Test func aFileNamedAfterADashWithAnHInItIsAUsageErrorNotTheHelp() throws {
        let (status, output, errors) = try CLI.run(["validate", "--strict", "-broken.ahap"])
        #expect(status == 64)
        #expect(output.isEmpty)
        #expect(errors.hasPrefix("haptics validate: unknown option \"-broken.ahap\""), "\(errors)")
    }

    @Test func aUsageErrorIsArgumentParsersMessageWithUsageAndStatus64() throws {
        let run = try CLI.run(["play", "--loop=-1", "thud"])
        #expect(run.status == 64)
        #expect(run.errors.hasPrefix("Error: --loop must be 0 (forever) or more"))
        #expect(run.errors.contains("Usage: haptics play"))
    }

    /// An argument that is not UTF-8 text (a Latin-1 file name, `caf\xE9.ahap`) is a usage error that names it with
    /// the odd byte escaped and says to rename the file. Read as text, the byte became U+FFFD and the argument named
    /// another file: `validate` said that a file that is there was not, and `render --output` wrote a file of
    /// another name, until 7 December. The shell names the file by its bytes, which `Process` cannot pass.
    @Test(arguments: [
        ("validate ./caf\\351.ahap", "validate"), ("render tap.ahap --format csv --output out\\351.csv", "render"),
        ("audio play x\\351.wav", "audio play"),
    ])
    func anArgumentThatIsNotUTF8IsAUsageErrorThatNamesItsBytes(arguments: String, command: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("latin1-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tap = #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient","EventParameters":[]}}]}"#
        try Data(tap.utf8).write(to: folder.appendingPathComponent("tap.ahap"))
        // printf turns each `\351` into the byte 0xE9; the words are split where the spaces are.
        let run = try CLI.run(
            [
                "-c", "cp tap.ahap \"$(printf 'caf\\351.ahap')\" && exec \"$0\" $(printf '\(arguments)')",
                try CLI.binary().path,
            ], in: folder, through: "/bin/sh")
        let named = arguments.split(separator: " ").first { $0.contains("\\351") }.map {
            $0.replacingOccurrences(of: "\\351", with: "\\xE9")
        }
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.output.isEmpty)
        #expect(
            run.errors.hasPrefix("haptics \(command): argument \"\(named ?? "")\" is not UTF-8 text"), "\(run.errors)")
        #expect(run.errors.contains("Rename the file"), "\(run.errors)")
        // tap.ahap and caf\xE9.ahap, and nothing written beside them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2)
    }
}
