import AHAP
import ArgumentParser
import Glibc

/// An argument whose bytes are not UTF-8 text (a file's name in Latin-1: `caf\xE9.ahap`). The command line is read
/// as text, which puts U+FFFD in place of such a byte: the argument then names another file, so `validate` said a
/// file that is there was not, and `render --output` wrote a file of another name. Looked for before the command
/// line is parsed, and refused as a usage error.
struct NonUTF8Argument: Equatable {
    /// The command the argument was given to, as typed: `haptics validate`.
    let command: String
    /// The argument, quoted, its odd bytes escaped: `"caf\xE9.ahap"`.
    let shown: String

    /// The first argument of `arguments` (the command line's bytes without the program's name) that is not UTF-8,
    /// for the command the subcommands before it name under `root`; nil when every argument is UTF-8.
    init?(arguments: [[UInt8]], root: any ParsableCommand.Type) {
        guard let index = arguments.firstIndex(where: { String(validating: $0, as: UTF8.self) == nil }) else {
            return nil
        }
        let words = arguments[..<index].lazy.map { String(decoding: $0, as: UTF8.self) }
        command = CommandNames.command(namedBy: words, under: root).path.joined(separator: " ")
        shown = String.quotedForMessage(bytes: arguments[index])
    }

    /// The arguments of this process, as the bytes it was given, without the program's name.
    static var commandLine: [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map { UInt8(bitPattern: $0) }
        }
    }

    /// What the user reads: which argument, why it cannot be used, and to rename the file.
    var failure: CommandFailure {
        CommandFailure(
            "argument \(shown) is not UTF-8 text",
            why:
                "haptics reads its arguments as UTF-8, and each byte written \\xHH is no part of a UTF-8 character, so "
                + "the name would be read as another one",
            fix: "Rename the file (or folder) to a UTF-8 name, then name it so: `convmv -f latin1 -t utf8 --notest "
                + "FILE` renames a Latin-1 one.")
    }
}
