import ArgumentParser
import FoundationEssentials
import Glibc
import LinuxInput

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print one line per input device added, removed or changed.",
        discussion: """
            Uses the udev daemon's events when one runs, otherwise the kernel's uevents (inotify on \
            /dev/input inside containers). A line "watching input devices (source: ...)" goes to \
            standard error once the monitor listens.
            """)

    @Flag(help: "Print JSON lines: {\"event\", \"id\", \"node\", \"name\", \"isGamepad\"}.")
    var json = false

    @Option(name: .customLong("for"), help: "Stop after this many seconds (default: until interrupted).")
    var duration: Double?

    @Option(help: "Force an event source: udev, kernel or inotify (default: chosen for this system).")
    var source: String?

    @Flag(name: .shortAndLong, help: "Log what the device layer does (to standard error).")
    var verbose = false

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--for takes a positive number of seconds.") }
        if let source, DeviceMonitor.Source(rawValue: source) == nil {
            throw ValidationError("--source is one of: udev, kernel, inotify.")
        }
    }

    func run() async throws {
        let chosen = source.flatMap(DeviceMonitor.Source.init(rawValue:)) ?? .automatic
        let monitor: DeviceMonitor
        do {
            monitor = try DeviceMonitor(source: chosen, logger: .haptics(verbose: verbose))
        } catch {
            throw CommandFailure("\(error)")
        }
        LineOutput.printError("watching input devices (source: \(monitor.source.rawValue))")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = json
        let monitorStoppedByItself = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in monitor {
                    if json, let line = try? encoder.encode(event) {
                        LineOutput.printLine(String(decoding: line, as: UTF8.self))
                    } else {
                        let gamepad = event.device.isGamepad ? " (gamepad)" : ""
                        LineOutput.printLine(
                            "\(event.kind.rawValue.padding(7))  \(event.device.id)  \(event.device.node)  "
                                + "\(event.device.name)\(gamepad)")
                    }
                }
                // Cancellation ends the loop too; only an end without it is the monitor's own failure.
                return !Task.isCancelled
            }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: .seconds(duration))
                    return false
                }
            }
            // Whichever ends first (the time is up, or the monitor stopped) ends the command.
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if monitorStoppedByItself {
            throw CommandFailure("the device monitor stopped: its event source failed (run with -v for the reason)")
        }
    }
}

/// Line output that reaches a pipe at once (print() is block-buffered when stdout is not a terminal):
/// a test or a script reads each event as it happens.
private enum LineOutput {
    static let standardOutput: Int32 = 1
    static let standardError: Int32 = 2

    static func printLine(_ text: String) { write(text + "\n", to: standardOutput) }

    static func printError(_ text: String) { write(text + "\n", to: standardError) }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
