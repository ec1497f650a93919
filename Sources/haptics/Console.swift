// Everything the CLI writes goes through here: lines on standard output that reach a pipe at once, messages on
// standard error, JSON lines, live meter lines redrawn on a terminal, and the failure type that tells the user
// what failed, why, and what to do.
import AHAP

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import HapticRendering
import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem

enum Console {
    /// A line on standard output, flushed: `print` is block-buffered when standard output is a pipe, and a test
    /// or a script reads each line as it happens.
    static func printLine(_ text: String) {
        print(text)
        flush()
    }

    /// A line on standard error. Standard error is unbuffered, so the line is there before the next one on
    /// standard output.
    static func printError(_ text: String) {
        var stream = StandardError()
        print(text, to: &stream)
    }

    /// Flushes every C stream (standard output is what matters); `fflush(NULL)` avoids the global `stdout`,
    /// which Swift 6 treats as shared mutable state.
    static func flush() { Sys.flushStandardStreams() }

    /// Whether standard output is a terminal, where the commands redraw live meters instead of printing lines.
    static var outputIsTerminal: Bool { Sys.isTerminal(STDOUT_FILENO) }

    /// Standard error as a `TextOutputStream`: one `write(2)` loop per string (`Sys.write` retries on `EINTR`); a
    /// failed write of a message is dropped, since there is nowhere else to say so.
    struct StandardError: TextOutputStream {
        mutating func write(_ string: String) {
            Array(string.utf8).withUnsafeBytes { buffer in _ = try? Sys.writeAll(STDERR_FILENO, buffer) }
        }
    }
}

/// One JSON object per line, for scripts and tests that read a command's output as it runs.
enum JSONLines {
    /// A flat event: `{"event":"NAME",...}` with the event first and the other fields sorted, every value a
    /// string.
    static func event(_ name: String, _ fields: [String: String] = [:]) -> String {
        let members =
            [JSONMember(key: "event", value: .string(name))]
            + fields.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) }
        return JSONWriter.compactText(of: .object(members))
    }
}

/// A status line redrawn in place on a terminal (carriage return, erase the line); off the terminal it draws
/// nothing, and the commands print one line per event instead.
struct LiveLine: Sendable {
    let enabled: Bool

    /// On when standard output is a terminal, unless the command prints something else (JSON) instead.
    init(enabled: Bool = Console.outputIsTerminal) {
        self.enabled = enabled
    }

    /// Replaces the line with `line` drawn with meters' bars as wide as fit the terminal (`fitted`), leaving the
    /// cursor on it. The width is read at each redraw, so a terminal made narrower is followed.
    func redraw(bars: ClosedRange<Int>, _ line: (_ barWidth: Int) -> String) {
        guard enabled else { return }
        let columns = Self.columns(
            terminal: Sys.terminalColumns(STDOUT_FILENO), environment: Sys.environment("COLUMNS"))
        print(Self.erase + Self.fitted(columns: columns, bars: bars, line), terminator: "")
        Console.flush()
    }

    /// `line` with the widest bars of `bars` that leave it within `columns` less one, else with the narrowest, cut
    /// to that. A line that reaches the last column wraps on many terminals, and the erase of the next redraw then
    /// reaches only its second row, leaving the first behind at every redraw.
    static func fitted(columns: Int, bars: ClosedRange<Int>, _ line: (_ barWidth: Int) -> String) -> String {
        let room = max(columns - 1, 1)
        var width = bars.upperBound
        while true {
            let text = line(width)
            if text.count <= room { return text }
            if width == bars.lowerBound { return String(text.prefix(room)) }
            width -= 1
        }
    }

    /// The terminal's width: what the terminal says, else `COLUMNS` (a whole number above 0), else 80.
    static func columns(terminal: Int?, environment: String?) -> Int {
        terminal ?? environment.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 80
    }

    /// Erases the line, so a regular line printed next starts at the left edge.
    func clear() {
        if enabled { print(Self.erase, terminator: "") }
    }

    /// Ends the line, so what follows (the shell's prompt) starts on a line of its own.
    func end() {
        if enabled { print("") }
    }

    private static let erase = "\r\u{1b}[K"
}

/// Motor levels as bars: `strong [######..............]  30%`.
enum MotorMeter {
    /// Width of a bar for the engine's levels (`play`, `replay`, `feedback`).
    static let width = 20

    /// The narrowest bar a live line shrinks its bars to on a narrow terminal (`LiveLine.fitted`): a quarter's
    /// steps still show.
    static let narrowestWidth = 4

    /// The bar widths of the engine's levels on a live line, the widest first tried.
    static let widths = narrowestWidth...width

    /// Both motors of an engine's output, rounded to the nearest character and percent.
    static func levels(_ levels: MotorMagnitudes, width: Int = width) -> String {
        meter("strong", levels.strong, width: width) + "  " + meter("weak", levels.weak, width: width)
    }

    /// Both HD actuators' peaks (voice coils, HD rumble) and the vibration's frequency.
    static func hdActuators(_ activity: ActuatorActivity, width: Int = width) -> String {
        let frequency = activity.frequency.map { String(cFormat: "%4ld Hz", Int($0.rounded())) } ?? "     -"
        let meters: String =
            meter("left", activity.left, width: width) + "  " + meter("right", activity.right, width: width)
        return meters + "  " + frequency
    }

    static func meter(_ label: String, _ level: Double, width: Int = width) -> String {
        let filled = Int((level * Double(width)).rounded())
        return "\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] " + String(cFormat: "%3ld%%", Int((level * 100).rounded()))
    }

    /// Width of a bar for a device's raw 16-bit magnitudes (`virtual-pad`, `emulate`).
    static let rawWidth = 24

    /// The bar widths of a device's raw magnitudes on a live line, the widest first tried.
    static let rawWidths = narrowestWidth...rawWidth

    /// Both motors of a device as the kernel sees them, in integer steps of the 16-bit `FF_RUMBLE` magnitude, so
    /// that a magnitude maps to the same bar whatever the floating-point rounding.
    static func raw(_ levels: MotorMagnitudes, width: Int = rawWidth) -> String {
        rawMeter("strong", ForceFeedbackEffect.magnitude(levels.strong), width: width) + "  "
            + rawMeter("weak", ForceFeedbackEffect.magnitude(levels.weak), width: width)
    }

    static func rawMeter(_ label: String, _ level: UInt16, width: Int = rawWidth) -> String {
        let filled = Int(level) * width / Int(UInt16.max)
        let percent = Int(level) * 100 / Int(UInt16.max)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "\(label) [\(bar)] \(percent)%"
    }

    /// A level as text with three decimals, for the JSON lines and the plain lines.
    static func text(_ levels: MotorMagnitudes) -> String {
        String(cFormat: "strong %.3f weak %.3f", levels.strong, levels.weak)
    }

    /// What an engine's output does at a moment, for a line of text and for JSON: its motors, or, on HD
    /// actuators that a stream drives (voice coils, HD rumble), their peaks and frequency (`hd` in JSON) beside
    /// the motors they stand for.
    static func output(_ levels: MotorMagnitudes, _ hd: ActuatorActivity?) -> (
        text: String, json: [String: String]
    ) {
        guard let hd else { return (Self.levels(levels), ["motors": text(levels)]) }
        let frequency = hd.frequency.map { String(cFormat: " %.0f Hz", $0) } ?? ""
        return (
            Self.hdActuators(hd),
            ["motors": text(levels), "hd": String(cFormat: "left %.3f right %.3f", hd.left, hd.right) + frequency]
        )
    }
}

/// A run-time failure (not a usage error), as the user needs it: what failed, why, and what to do about it.
/// `Haptics.main` prints it as `haptics COMMAND: WHAT: WHY` and the fix on the next line, and exits with 1.
struct CommandFailure: Error, CustomStringConvertible {
    let what: String
    let why: String?
    let fix: String?

    init(_ what: String, why: String? = nil, fix: String? = nil) {
        self.what = what
        self.why = why
        self.fix = fix
    }

    /// The failure as printed; a character that shows nothing of itself or acts on the terminal (an escape
    /// sequence's ESC, a bidirectional override: `Unicode.Scalar.isHidden`) is written escaped, `\u001b`, since
    /// names the user gave are in it (a pattern's name printed raw, a file name could recolour or clear the terminal,
    /// until 6 December). Its own line breaks stay.
    var description: String {
        let reason = why.map { "\(what): \($0)" } ?? what
        return (fix.map { "\(reason)\n\($0)" } ?? reason).escapingHiddenButLineBreaks
    }
}

extension String {
    /// `format` filled in with `arguments` by C's printf rules (`%.3f`, `%6.2f`, `%3ld%%`), as Foundation's
    /// `String(format:)` fills it in. Foundation is not linked into the CLI: it would bring CoreFoundation and
    /// ICU's data, 34 MB of the binary.
    init(cFormat format: String, _ arguments: any CVarArg...) {
        self = Self.printed(format, arguments)
    }

    private static func printed(_ format: String, _ arguments: [any CVarArg]) -> String {
        var capacity = 64
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            // A va_list is used up by one call, so each attempt makes its own.
            let length = Int(withVaList(arguments) { vsnprintf(&buffer, capacity, format, $0) })
            guard length >= capacity else {
                return String(
                    decoding: buffer.prefix(Swift.max(length, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            capacity = length + 1
        }
    }

    /// The text followed by spaces up to `width` characters, for a table's column; a longer text is left whole.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
