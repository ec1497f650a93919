/// What `PureLayersTests` looks for in a pure layer's source: an import outside the layer's allow-list, or a
/// spelling of the C library or of file I/O. A pure function of the text, so the tests run it on snippets too.
///
/// The text is first cut into tokens: comments (`//` to the end of the line, `/* ... */` nested) are dropped,
/// every string literal (`"..."`, `"""` multi-line, raw `#"..."#`) becomes one empty-string token while the code
/// of its interpolations `\( ... )` is kept, and whitespace and newlines only separate tokens, so a call split
/// over lines reads as on one. The rules then look at a few tokens around each:
///
/// - `import` (whatever attributes and modifiers stand before it), an optional kind (`import struct A.B`), then
///   the module: it must be in the allow-list. `Foundation` only in the `#else` of `#if
///   canImport(FoundationEssentials)`: on Linux `import Foundation` brings the C library along, while
///   FoundationEssentials brings none of it, so there the compiler itself refuses any call of the C library.
/// - A name of the C library or of a Foundation file API, anywhere: `Glibc`, `Darwin`, `Musl`, `fopen`,
///   `FileManager`, `FileHandle`, `InputStream`, `OutputStream`, `resolvingSymlinksInPath`, `Bundle`. A name in
///   backticks is the name.
/// - FoundationEssentials' ways to the file system and the environment: `URL.currentDirectory()`,
///   `homeDirectory`, `temporaryDirectory`, `URL(fileURLWithPath:)`, `URL(filePath:)`, and `Data.init` taken as a
///   function (its `init(contentsOf:options:)` reads a file).
/// - The C library's calls of `cLibraryCalls` (`open(`, `read(`...) and `resourceValues(`, unless the text
///   declares the name itself (`func read`, `let close = {...}`) and calls it so: anywhere in the file, as the
///   scanner knows no scopes (a member `var open` of one type hides a C `open(` elsewhere in the file; on Linux the
///   compiler refuses that call in a pure layer all the same, FoundationEssentials bringing no C library).
/// - A file read: a `contentsOf:` argument given to a type or to `init` (`Data(contentsOf:`, `.init(contentsOf:`,
///   `Data.init(contentsOf:`), a label `contentsOf` followed by a capital (`contentsOfFile:`), or a parameter
///   declared `contentsOf name: URL`. A `contentsOf:` given to a method (`append(contentsOf:)`) is pure.
/// - A file write: `write(toFile:` always; `.write(to:` unless its argument is an inout buffer (`&`).
///
/// It is no Swift parser: regex literals are read as code, and a name these rules do not list is not seen.
enum PureLayerScanner {
    /// One thing a pure layer may not have: what was seen, and the line it begins on.
    struct Finding: Equatable, CustomStringConvertible {
        var line: Int
        var what: String
        var description: String { "line \(line): \(what)" }
    }

    /// A name, a number, one character of punctuation, or `""` for a whole string literal.
    struct Token {
        var text: String
        var line: Int
    }

    /// Names that never belong in a pure layer's code, whatever surrounds them.
    static let forbiddenNames: Set<String> = [
        "Glibc", "Darwin", "Musl", "fopen", "FileManager", "FileHandle", "InputStream", "OutputStream",
        "resolvingSymlinksInPath", "Process", "ProcessInfo", "URLSession", "Bundle",
        // FoundationEssentials' own ways to the file system, the environment and the process's state: the
        // current folder (getcwd), `$HOME` and `$TMPDIR`, and a path made a URL (a stat: is it a folder?).
        "currentDirectory", "currentDirectoryPath", "homeDirectory", "temporaryDirectory", "fileURLWithPath",
        "filePath",
    ]

    /// The C library's calls for files, processes and the environment, which `import Foundation` brings along on
    /// Linux: flagged when called as functions (`open(path, flags)`, `Foundation.open(path, flags)`), not as a
    /// method (`player.open(x)`) nor where declared (`func open(_:)`, `case open(Int)`).
    static let cLibraryCalls: Set<String> = [
        "open", "openat", "creat", "popen", "pread", "pwrite", "stat", "lstat", "fstat", "opendir", "mmap", "dlopen",
        "system", "getenv", "setenv", "fread", "fwrite", "fdopen", "fputs", "read", "close", "unlink", "rename",
        "mkdir", "rmdir", "ioctl", "socket", "fork", "execv", "execvp",
    ]

    /// A `#if` being read: whether it is `#if canImport(FoundationEssentials)`, and whether its `#else` is.
    private struct Conditional {
        var testsFoundationEssentials: Bool
        var inElse = false
    }

    /// The kinds `import` may name before a declaration's path (`import struct Module.Type`).
    static let importKinds: Set<String> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]

    static func findings(in source: String, allowedImports: Set<String>) -> [Finding] {
        let (tokens, unclosedStrings) = tokens(of: source)
        func text(_ index: Int) -> String { tokens.indices.contains(index) ? tokens[index].text : "" }
        // A C library's name the text declares itself (`func read`, `let close = {...}`) is its own when called.
        let declared = Set(
            tokens.indices.filter { ["func", "let", "var"].contains(tokens[$0].text) }.map { text($0 + 1) })
        var findings: [Finding] = []
        var conditionals: [Conditional] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            func flag(_ what: String) { findings.append(Finding(line: token.line, what: what)) }
            switch token.text {
            case "#":
                switch text(index + 1) {
                case "if":
                    // The whole condition, which ends with its line: `canImport(FoundationEssentials) && os(macOS)`
                    // is another test, whose `#else` is compiled on Linux.
                    let test = (2...5).map { text(index + $0) }
                    let endsThere = index + 6 >= tokens.count || tokens[index + 6].line > tokens[index + 5].line
                    conditionals.append(
                        Conditional(
                            testsFoundationEssentials: endsThere
                                && test == ["canImport", "(", "FoundationEssentials", ")"]))
                case "elseif":
                    conditionals.indices.last.map { conditionals[$0] = Conditional(testsFoundationEssentials: false) }
                case "else":
                    conditionals.indices.last.map { conditionals[$0].inElse = true }
                case "endif":
                    _ = conditionals.popLast()
                default:
                    break
                }
            case "import" where text(index - 1) != ".":
                var module = index + 1
                if importKinds.contains(text(module)) { module += 1 }
                if isName(text(module)) {
                    if text(module) == "Foundation" {
                        let fallback = conditionals.last.map { $0.testsFoundationEssentials && $0.inElse } ?? false
                        if !fallback || !allowedImports.contains("FoundationEssentials") {
                            flag("import Foundation outside the #else of #if canImport(FoundationEssentials)")
                        }
                    } else if !allowedImports.contains(text(module)) {
                        flag("import \(text(module))")
                    }
                    index = module
                }
            case let name where forbiddenNames.contains(name):
                flag(name)
            case let name
            where cLibraryCalls.contains(name) && text(index + 1) == "(" && text(index - 1) != "func"
                && text(index - 1) != "case"
                && (text(index - 1) == "."
                    ? ["Foundation", "Glibc", "Darwin", "Musl"].contains(text(index - 2)) : !declared.contains(name)):
                flag("\(name)(")
            case "init" where text(index - 1) == "." && text(index - 2) == "Data" && text(index + 1) != "(":
                // Data's initializers taken as a function: `init(contentsOf:options:)` among them.
                flag("Data.init")
            case "resourceValues" where text(index + 1) == "(":
                flag("resourceValues(")
            case "contentsOf":
                let callee = text(index - 2)
                if text(index - 1) == "(", text(index + 1) == ":", callee == "init" || callee.first?.isUppercase == true
                {
                    flag("\(callee)(contentsOf:")
                } else if isName(text(index + 1)), text(index + 2) == ":", text(index + 3) == "URL" {
                    flag("contentsOf \(text(index + 1)): URL")
                }
            case let label where label.hasPrefix("contentsOf") && label.dropFirst(10).first?.isUppercase == true:
                flag(label)
            case "write" where text(index + 1) == "(":
                if text(index + 2) == "toFile" {
                    flag("write(toFile:")
                } else if text(index - 1) == ".", text(index + 2) == "to", text(index + 3) == ":",
                    text(index + 4) != "&"
                {
                    flag(".write(to:")
                }
            default:
                break
            }
            index += 1
        }
        // A string the scanner saw no end to means it read this text wrongly: the code after it went unseen.
        findings += unclosedStrings.map { Finding(line: $0, what: "a string literal that does not close") }
        return findings
    }

    /// Whether a token is a name (a module, a type, a label), not punctuation or a string.
    static func isName(_ text: String) -> Bool {
        guard let first = text.utf8.first else { return false }
        return isNameByte(first) && !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), 0x80...:
            return true
        default:
            return false
        }
    }

    /// A string literal being read: its `#` count, whether it is `"""`, and the parentheses open in the
    /// interpolation being read inside it, if any.
    private struct OpenString {
        var hashes: Int
        var multiline: Bool
        var parentheses = 0
    }

    /// The tokens of a text, and the lines of the string literals that do not close: a one-line string ends
    /// with its line, a multi-line one with the text.
    static func tokens(of source: String) -> (tokens: [Token], unclosedStrings: [Int]) {
        let bytes = Array(source.utf8)
        let quote = UInt8(ascii: "\""), hash = UInt8(ascii: "#"), backslash = UInt8(ascii: "\\")
        let newline = UInt8(ascii: "\n"), slash = UInt8(ascii: "/"), star = UInt8(ascii: "*")
        func byte(_ index: Int) -> UInt8 { index < bytes.count ? bytes[index] : 0 }
        func hashes(from index: Int) -> Int {
            var end = index
            while byte(end) == hash { end += 1 }
            return end - index
        }
        func tripleQuote(at index: Int) -> Bool {
            byte(index) == quote && byte(index + 1) == quote && byte(index + 2) == quote
        }

        var tokens: [Token] = []
        var unclosedStrings: [Int] = []
        var line = 1
        var index = 0
        // The strings around the code being read, innermost last; `inString` when their text is being read,
        // not the code of an interpolation in them.
        var strings: [OpenString] = []
        // The line each of them opens on.
        var openedOn: [Int] = []
        var inString = false
        while index < bytes.count {
            let current = bytes[index]
            if inString {
                let open = strings[strings.count - 1]
                if current == backslash && hashes(from: index + 1) >= open.hashes {
                    let next = index + 1 + open.hashes
                    if byte(next) == UInt8(ascii: "(") {
                        inString = false
                        index = next + 1
                    } else {
                        if byte(next) == newline { line += 1 }
                        index = next + 1
                    }
                } else if current == quote, !open.multiline || tripleQuote(at: index),
                    hashes(from: index + (open.multiline ? 3 : 1)) >= open.hashes
                {
                    strings.removeLast()
                    openedOn.removeLast()
                    inString = false
                    index += (open.multiline ? 3 : 1) + open.hashes
                } else if current == newline && !open.multiline {
                    unclosedStrings.append(openedOn.removeLast())
                    strings.removeLast()
                    inString = false
                } else {
                    if current == newline { line += 1 }
                    index += 1
                }
                continue
            }
            let start = index
            if current == slash && byte(index + 1) == slash {
                while index < bytes.count && bytes[index] != newline { index += 1 }
            } else if current == slash && byte(index + 1) == star {
                var depth = 0
                repeat {
                    if byte(index) == slash && byte(index + 1) == star {
                        depth += 1
                        index += 2
                    } else if byte(index) == star && byte(index + 1) == slash {
                        depth -= 1
                        index += 2
                    } else {
                        if byte(index) == newline { line += 1 }
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            } else if current == quote || (current == hash && byte(index + hashes(from: index)) == quote) {
                let count = hashes(from: index)
                let multiline = tripleQuote(at: index + count)
                tokens.append(Token(text: "\"\"", line: line))
                strings.append(OpenString(hashes: count, multiline: multiline))
                openedOn.append(line)
                inString = true
                index += count + (multiline ? 3 : 1)
            } else if current == UInt8(ascii: "`") {
                // A name in backticks is the name: `` `Glibc` `` is Glibc.
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "`") && bytes[index] != newline { index += 1 }
                tokens.append(
                    Token(
                        text: String(decoding: bytes[(start + 1)..<min(index, bytes.count)], as: UTF8.self), line: line)
                )
                index += 1
            } else if isNameByte(current) {
                while index < bytes.count && isNameByte(bytes[index]) { index += 1 }
                tokens.append(Token(text: String(decoding: bytes[start..<index], as: UTF8.self), line: line))
            } else if current <= UInt8(ascii: " ") {
                if current == newline { line += 1 }
                index += 1
            } else {
                if !strings.isEmpty && current == UInt8(ascii: "(") {
                    strings[strings.count - 1].parentheses += 1
                } else if !strings.isEmpty && current == UInt8(ascii: ")") {
                    if strings[strings.count - 1].parentheses == 0 {
                        inString = true
                        index += 1
                        continue
                    }
                    strings[strings.count - 1].parentheses -= 1
                }
                tokens.append(Token(text: String(UnicodeScalar(current)), line: line))
                index += 1
            }
        }
        return (tokens, unclosedStrings + openedOn)
    }
}
