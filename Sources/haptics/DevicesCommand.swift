import ArgumentParser
import FoundationEssentials
import LinuxInput
import Logging

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List rumble-capable input devices (--all: every input device).",
        discussion: """
            The index in the first column (#) is what `haptics probe INDEX` takes. Ids stay the same when \
            a device is unplugged and plugged back (into the same port, for a pad without a serial number). JSON \
            schema: docs/devices.md.
            """)

    @Flag(help: "List every input event node, not only rumble-capable ones.")
    var all = false

    @Flag(help: "Print a JSON array (schema in docs/devices.md).")
    var json = false

    @OptionGroup var logging: VerboseOption

    func run() throws {
        let listing = try DeviceListing(logger: logging.logger)
        let shown = all ? listing.all : listing.rumbleCapable
        if json {
            print(try DeviceReportJSON.listing(shown))
            return
        }
        guard !listing.all.isEmpty else {
            print(listing.noDevicesMessage)
            return
        }
        guard !shown.isEmpty else {
            print(
                "No rumble-capable device among \(listing.all.count) input device(s). "
                    + "`haptics devices --all` lists them all.")
            if listing.all.contains(where: { $0.access.isPermissionProblem }) {
                print(
                    "Some devices could not be opened, so their capabilities may be incomplete.\n"
                        + AccessAdvice.eventNodes())
            }
            return
        }
        printTable(shown, listing: listing)
        if shown.contains(where: { $0.access.isPermissionProblem && $0.forceFeedback.isAvailable }) {
            print(
                "\nSome devices are not writable, so force feedback cannot be played on them.\n"
                    + AccessAdvice.eventNodes())
        }
        // A node that cannot be opened for another reason than its permissions (gone, or a container that shows
        // the host's sysfs without its /dev nodes): the udev rule would not help, so say what the system said.
        let otherwise = shown.filter { !$0.access.isPermissionProblem && $0.access.reason != nil }
        if !otherwise.isEmpty {
            print("\nSome devices could not be opened, for another reason than permissions:")
            for device in otherwise { print("  \(device.node): \(device.access.reason ?? "")") }
        }
    }

    private func printTable(_ devices: [InputDevice], listing: DeviceListing) {
        var rows = [["#", "ID", "NODE", "NAME", "GAMEPAD", "FORCE FEEDBACK", "ACCESS"]]
        for device in devices {
            let index = listing.rumbleCapable.firstIndex(of: device).map(String.init) ?? ""
            rows.append([
                index, device.id.rawValue, device.node, device.name, device.isGamepad ? "yes" : "no",
                forceFeedbackColumn(device.forceFeedback), device.access.name,
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padded(to: widths[column])
            }
            print(cells.joined(separator: "  "))
        }
    }

    private func forceFeedbackColumn(_ ff: ForceFeedbackCapabilities) -> String {
        guard ff.isAvailable else { return "-" }
        let slots = ff.maxEffects.map { " (\($0) slots)" } ?? ""
        return ff.effects.map(\.name).joined(separator: ",") + slots
    }
}

/// The devices as `devices` lists them and `probe` selects them.
struct DeviceListing {
    /// Every input event node, in event-number order.
    let all: [InputDevice]
    /// The rumble-capable ones; `haptics probe N` selects `rumbleCapable[N]`.
    var rumbleCapable: [InputDevice] { all.filter(\.forceFeedback.isRumbleCapable) }
    /// Whether `/dev/input` existed when the devices were listed: without it the system has no evdev device at all.
    let inputDirectoryExists: Bool

    /// This system's devices.
    init(logger: Logger) throws {
        let all: [InputDevice]
        do {
            all = try DeviceDiscovery(logger: logger).devices()
        } catch {
            throw CommandFailure(
                "cannot list the input devices", why: "\(error)", fix: "Run with -v to see what the device layer did.")
        }
        self.init(all: all, inputDirectoryExists: DeviceDiscovery.inputDirectoryExists)
    }

    /// The devices `all` of a system that has `/dev/input` or not.
    init(all: [InputDevice], inputDirectoryExists: Bool) {
        self.all = all
        self.inputDirectoryExists = inputDirectoryExists
    }

    /// What `devices` says when the listing is empty.
    var noDevicesMessage: String {
        let reason = inputDirectoryExists ? "" : ": \(noDevicesReason)"
        return "No input devices found\(reason). \(Self.noDevicesFix)"
    }

    /// Why no input device is listed.
    var noDevicesReason: String {
        inputDirectoryExists
            ? "this system lists no input device at all"
            : "this system has no /dev/input (no evdev devices, or a container or VM without them)"
    }

    /// What to do without an input device.
    static let noDevicesFix =
        "Plug in a gamepad, create a virtual one with `haptics virtual-pad` (root, /dev/uinput), or play on the "
        + "built-in virtual output: `haptics play thud --device virtual`."
}

/// `-v`: what the device layer does, on standard error (`devices`, `probe`, `monitor`).
struct VerboseOption: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log what the device layer does (to standard error).")
    var verbose = false

    var logger: Logger { .haptics(verbose: verbose) }
}

extension Logger {
    /// The CLI's logger: the library's messages go to standard error, so standard output stays clean for
    /// tables and JSON; warnings and up unless `verbose`.
    static func haptics(verbose: Bool) -> Logger {
        var logger = Logger(label: "haptics") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }
}
