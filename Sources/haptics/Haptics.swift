import ArgumentParser
import Dispatch
import LinuxInput
import Glibc
@_spi(Internals) import LinuxSystem

@main
struct Haptics: AsyncParsableCommand {
    /// What `haptics --version` prints. `make install`'s check compares it with the C library's `.pc` version.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "haptics",
        abstract: "Feel, probe and replay Core Haptics (AHAP) patterns on Linux gamepads through evdev force feedback.",
        discussion: """
            `haptics SUBCOMMAND --help` describes a subcommand (its manual page: haptics-SUBCOMMAND). A pattern named \
            without a path (`haptics play thud`, `haptics render thud`) is NAME.ahap in $HAPTICS_DIR when it is set \
            (and nowhere else), else in the first Haptics folder that exists among ./Haptics, the copy installed with the program (PREFIX/share/haptics/Haptics \
            for PREFIX/bin/haptics), /usr/local/share/haptics/Haptics, /usr/share/haptics/Haptics and, run from a \
            clone, the repository's Haptics. Without root, gamepads open read-write through the udev rule \
            70-haptics-gamepads.rules that `make install` puts in /etc/udev/rules.d.
            """,
        version: version,
        subcommands: [
            VirtualPadCommand.self,
            EmulateCommand.self,
            DevicesCommand.self,
            ProbeCommand.self,
            MonitorCommand.self,
            ValidateCommand.self,
            RenderCommand.self,
            PlayCommand.self,
            ReplayCommand.self,
            FeedbackCommand.self,
            AudioCommand.self,
        ])

    /// ArgumentParser's own `main`, except that a command's failure (a `CommandFailure`, or any other error but
    /// ArgumentParser's own) is printed as `haptics COMMAND: ...` (no usage text: the arguments were fine) and
    /// exits with 1, and that a misspelt subcommand is said as such, with the nearest one (`UnknownSubcommand`),
    /// and exits with 64 as a usage error does, as does a word ArgumentParser took for short options with `-h`
    /// among them that name no option (`UnknownShortOptions`: `-broken.ahap`, a file's name, showed the help with
    /// status 0), and an argument that is not UTF-8 text (`NonUTF8Argument`). Other usage errors, `--help` and
    /// `ExitCode`s go through ArgumentParser as usual.
    static func main() async {
        if let argument = NonUTF8Argument(arguments: NonUTF8Argument.commandLine, root: self) {
            Console.printError("\(argument.command): \(argument.failure)")
            exit(withError: ExitCode.validationFailure)
        }
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot()
        } catch {
            if let unknown = UnknownSubcommand(arguments: Array(CommandLine.arguments.dropFirst()), root: self) {
                Console.printError("\(unknown.command): \(unknown.failure)")
                exit(withError: ExitCode.validationFailure)
            }
            exit(withError: error)
        }
        // ArgumentParser's help command, made for a `-h` it found or for `help`: a word that names no option, or
        // (after `help`) no subcommand, is a usage error rather than the help of the command above it with status 0.
        if String(reflecting: type(of: command)).hasPrefix("ArgumentParser.") {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let unknown = UnknownShortOptions(arguments: arguments, root: self) {
                Console.printError("\(unknown.command): \(unknown.failure)")
                exit(withError: ExitCode.validationFailure)
            }
            if arguments.first == "help",
                let unknown = UnknownSubcommand(arguments: Array(arguments.dropFirst()), root: self)
            {
                Console.printError("\(unknown.command): \(unknown.failure)")
                exit(withError: ExitCode.validationFailure)
            }
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error where isArgumentParserOutcome(error) {
            if exitCode(for: error) == .success { requireStandardOutputWritten(by: command) }
            exit(withError: error)
        } catch {
            // A CommandFailure, or a failure of the library or the system (an engine call the device refused): the
            // command's own failure, said after its name, without ArgumentParser's `Error:` and usage hint.
            Console.printError("haptics \(name(of: command)): \(error)")
            exit(withError: ExitCode.failure)
        }
        requireStandardOutputWritten(by: command)
    }

    /// The command's name in messages: `play`, `audio play`.
    static func name(of command: any ParsableCommand) -> String {
        (command as? any NestedCommand).map { type(of: $0).path }
            ?? type(of: command).configuration.commandName ?? "haptics"
    }

    /// Exits with 1, saying why, when a write to standard output failed (a full disk, `> /dev/full`): what the
    /// command printed is incomplete, so it did not succeed (until 6 December it exited with 0).
    static func requireStandardOutputWritten(by command: any ParsableCommand) {
        guard let failure = Sys.flushStandardOutput() else { return }
        let why = failure.errno.rawValue == 0 ? "a write failed" : "\(failure.errno)"
        Console.printError(
            "haptics \(name(of: command)): writing to standard output failed: \(why); what it printed is incomplete")
        exit(withError: ExitCode.failure)
    }

    /// An error of ArgumentParser's own types thrown while a command runs: an exit status, a clean exit, a usage
    /// error, the `help` command's request for help. ArgumentParser says and ends these as usual. (Its
    /// `CommandError` is internal to it, so the types are told by their module.)
    static func isArgumentParserOutcome(_ error: any Error) -> Bool {
        String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
    }
}

/// A subcommand of a subcommand (`audio play`), named by its whole path in error messages.
protocol NestedCommand {
    static var path: String { get }
}

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed), taken from their default action (ending the process at
/// once) and handed to `handler` on a thread of their own, so a command stops its motors or removes its device on
/// the normal path.
/// The caller keeps the subscription while it wants the signals and cancels it after; the signals stay caught, and
/// one that comes while no handler is subscribed (between a `--wait` and the play after it) is handed to the next
/// handler, so that it is not lost. The thread blocks in `read` on the signal pipe: nothing wakes the process while
/// no signal comes.
final class TerminationSignals: Sendable {
    private let id: Int

    private init(id: Int) { self.id = id }

    private struct Subscribers {
        var handlers: [Int: @Sendable (Int32) -> Void] = [:]
        var nextID = 0
        var listening = false
        /// A signal that came with no handler subscribed, for the next one.
        var pending: Int32?
    }

    private static let subscribers = Lock(Subscribers())

    /// The signals delivered.
    static let numbers = [SIGINT, SIGTERM, SIGHUP]

    /// The exit status a shell reports for a process `signal` ended: 128 and its number (130 for Ctrl-C).
    static func status(after signal: Int32) -> Int32 { 128 + signal }

    /// Starts delivering SIGINT, SIGTERM and SIGHUP to `handler`. When the signals cannot be caught (no pipe or thread
    /// left), they keep their default action, which ends the process as before.
    static func handle(_ handler: @escaping @Sendable (Int32) -> Void) -> TerminationSignals {
        let (id, mustListen, pending) = subscribers.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            defer {
                state.listening = true
                state.pending = nil
            }
            return (state.nextID, !state.listening, state.pending)
        }
        if mustListen { listen() }
        if let pending { handler(pending) }
        return TerminationSignals(id: id)
    }

    func cancel() { _ = Self.subscribers.withLock { $0.handlers.removeValue(forKey: id) } }

    private static func listen() {
        do {
            let pipe = try Sys.signalPipe(numbers)
            try Sys.startThread {
                var byte: UInt8 = 0
                while (try? withUnsafeMutableBytes(of: &byte) { try Sys.read(pipe, into: $0) }) == 1 {
                    let number = Int32(byte)
                    let handlers = subscribers.withLock { state in
                        if state.handlers.isEmpty { state.pending = state.pending ?? number }
                        return Array(state.handlers.values)
                    }
                    for handler in handlers { handler(number) }
                }
            }
        } catch {
            subscribers.withLock { $0.listening = false }
        }
    }
}
