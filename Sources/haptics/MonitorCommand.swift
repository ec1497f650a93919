import ArgumentParser
import FoundationEssentials
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

    @Flag(help: "Print JSON lines: {\"event\", \"id\", \"node\", \"name\", \"isGamepad\", \"access\"}.")
    var json = false

    @Option(
        name: .customLong("for"), parsing: .unconditional,
        help: "Stop after this many seconds, more than 0 and at most a year (default: until interrupted).")
    var duration: Double?

    /// The longest `--for`: a year, in seconds, far inside what a sleep can be asked for.
    static let longestDuration = 366.0 * 24 * 3600

    @Option(help: "Force an event source (default: chosen for this system).")
    var source: DeviceMonitor.Source?

    @OptionGroup var logging: VerboseOption

    /// The warning for a monitor on `source`, or nil: the udev source hears nothing where no udev daemon runs
    /// (`daemonRuns`, this system's by default).
    static func warning(for source: DeviceMonitor.Source, daemonRuns: Bool = DeviceDiscovery.udevDaemonIsRunning)
        -> String?
    {
        guard source == .udev, !daemonRuns else { return nil }
        return "warning: no udev daemon runs (\(DeviceDiscovery.udevDaemonControlPath) is missing), so the udev "
            + "source hears nothing; leave --source out, or pass --source kernel"
    }

    func validate() throws {
        if let duration, !(duration > 0 && duration <= Self.longestDuration) {
            throw ValidationError(
                "--for takes a positive number of seconds, at most \(Int(Self.longestDuration)) (a year); "
                    + "leave it out to watch until interrupted.")
        }
    }

    func run() async throws {
        let monitor: DeviceMonitor
        do {
            monitor = try DeviceMonitor(source: source ?? .automatic, logger: logging.logger)
        } catch {
            throw CommandFailure(
                "cannot watch input devices", why: "\(error)",
                fix: "Try another --source (udev, kernel or inotify), or run with -v for the details.")
        }
        Console.printError("watching input devices (source: \(monitor.source.rawValue))")
        if let warning = Self.warning(for: monitor.source) { Console.printError(warning) }
        let json = json
        let monitorStoppedByItself = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in monitor {
                    if json, let line = try? DeviceReportJSON.line(event) {
                        Console.printLine(line)
                    } else {
                        let gamepad = event.device.isGamepad ? " (gamepad)" : ""
                        // Only a node this user cannot use says so: a permission change is a `changed` line.
                        let access = event.device.access == .readWrite ? "" : " [\(event.device.access.name)]"
                        Console.printLine(
                            "\(event.kind.rawValue.padded(to: 7))  \(event.device.id)  \(event.device.node)  "
                                + "\(event.device.name)\(gamepad)\(access)")
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
            throw CommandFailure(
                "the device monitor stopped", why: "its event source failed",
                fix: "Run with -v for the reason, or try another --source.")
        }
    }
}
