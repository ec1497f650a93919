// How a fuzz target reports a broken invariant.

/// Checks an invariant of a fuzz target. A failure stops the process with `message`; libFuzzer catches the trap
/// and keeps the input as a crash artifact. `fatalError`, not `assert`: the targets are release builds.
func expect(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { fatalError("invariant broken: \(message())", file: file, line: line) }
}
