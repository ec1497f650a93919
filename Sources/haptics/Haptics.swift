import ArgumentParser
import Dispatch
import Glibc

@main
struct Haptics: AsyncParsableCommand {
    /// What `haptics --version` prints. `make install`'s check compares it with the C library's `.pc` version.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "haptics",
        abstract: "Feel, probe and replay Core Haptics (AHAP) patterns on Linux gamepads through evdev force feedback.",
        discussion: """
            `haptics SUBCOMMAND --help` describes a subcommand (its manual page: haptics-SUBCOMMAND). A pattern \
            named without a path (`haptics play thud`) is NAME.ahap in the first Haptics folder that exists among \
            $HAPTICS_DIR, ./Haptics, the copy installed with the program (PREFIX/share/haptics/Haptics for \
            PREFIX/bin/haptics), /usr/local/share/haptics/Haptics and /usr/share/haptics/Haptics. Without root, \
            gamepads open read-write through the udev rule 70-haptics-gamepads.rules that `make install` puts in \
            /etc/udev/rules.d.
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
        ])

    /// ArgumentParser's own `main`, except that a `CommandFailure` is printed as `haptics COMMAND: ...` (no
    /// usage text: the arguments were fine) and exits with 1. Usage errors, `--help` and `ExitCode`s go
    /// through ArgumentParser as usual.
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            let name = type(of: command).configuration.commandName ?? "haptics"
            Console.printError("haptics \(name): \(failure)")
            exit(withError: ExitCode.failure)
        } catch {
            exit(withError: error)
        }
    }
}

/// Ctrl-C (SIGINT) and SIGTERM, taken from their default action (ending the process at once) and handed to
/// `handler` on a dispatch queue, so a command stops its motors or removes its device on the normal path. The
/// caller keeps the sources while it wants the signals and cancels them after; the signals stay ignored.
enum TerminationSignals {
    static func handle(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }
}
