import Foundation
import Testing

@testable import AssistantREPL
@testable import ShoppingAssistant

/// Widths of grapheme clusters as the terminal draws them: every row of `table` is the cursor
/// advance tmux 3.3a measured for the sequence (printed after a `|` in a 100-column pane,
/// `#{cursor_x}` minus one, `LANG=C.UTF-8`). `DISPLAY_WIDTH_TMUX=1` measures them again with
/// the tmux on this machine. Where terminals disagree (see `DisplayWidth`), the table says which
/// reading the REPL takes.
@Suite(.timeLimit(.minutes(3))) struct GraphemeWidthTests {
    struct Sequence: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        /// tmux 3.3a's cursor advance, and the REPL's width.
        let columns: Int
        var testDescription: String { name }
    }

    static let table: [Sequence] = [
        Sequence(name: "ASCII letter", text: "A", columns: 1),
        Sequence(name: "Cyrillic letter", text: "Ж", columns: 1),
        Sequence(name: "CJK ideograph", text: "中", columns: 2),
        Sequence(name: "Hangul syllable", text: "한", columns: 2),
        Sequence(name: "conjoining jamo", text: "\u{1112}\u{1161}\u{11AB}", columns: 2),
        Sequence(name: "e with a combining acute", text: "e\u{301}", columns: 1),
        Sequence(name: "emoji", text: "🙂", columns: 2),
        Sequence(name: "heart, text by default", text: "\u{2764}", columns: 1),
        // VS16: kitty, WezTerm, foot and iTerm2 draw these two columns wide.
        Sequence(name: "heart with VS16", text: "\u{2764}\u{FE0F}", columns: 1),
        Sequence(name: "smiley with VS16", text: "\u{263A}\u{FE0F}", columns: 1),
        Sequence(name: "thumbs up with VS16", text: "\u{1F44D}\u{FE0F}", columns: 2),
        // VS15 (text presentation) does not narrow an emoji that is wide by default.
        Sequence(name: "heart with VS15", text: "\u{2764}\u{FE0E}", columns: 1),
        Sequence(name: "watch with VS15", text: "\u{231A}\u{FE0E}", columns: 2),
        // Skin tones: the grapheme-aware terminals draw 2 and 2 + 2.
        Sequence(name: "thumbs up, skin tone", text: "\u{1F44D}\u{1F3FD}", columns: 4),
        Sequence(name: "two thumbs, skin tones", text: "\u{1F44D}\u{1F3FD}\u{1F44D}\u{1F3FB}", columns: 8),
        // ZWJ sequences: xterm and VTE draw each emoji; tmux and the grapheme-aware terminals one.
        Sequence(name: "family (ZWJ)", text: "👨\u{200D}👩\u{200D}👧", columns: 2),
        Sequence(name: "two families", text: "👨\u{200D}👩\u{200D}👧👨\u{200D}👩\u{200D}👧", columns: 4),
        Sequence(name: "woman technologist (ZWJ)", text: "👩\u{200D}💻", columns: 2),
        Sequence(name: "people holding hands (ZWJ)", text: "🧑\u{200D}🤝\u{200D}🧑", columns: 2),
        Sequence(name: "couple with heart (ZWJ, VS16)", text: "👩\u{200D}\u{2764}\u{FE0F}\u{200D}👨", columns: 2),
        Sequence(name: "polar bear (ZWJ, VS16)", text: "🐻\u{200D}\u{2744}\u{FE0F}", columns: 2),
        Sequence(name: "rainbow flag (narrow base, ZWJ)", text: "\u{1F3F3}\u{FE0F}\u{200D}🌈", columns: 1),
        Sequence(name: "heart on fire (narrow base, ZWJ)", text: "\u{2764}\u{FE0F}\u{200D}🔥", columns: 1),
        Sequence(name: "technologist, skin tone (ZWJ)", text: "👩\u{1F3FD}\u{200D}💻", columns: 4),
        Sequence(
            name: "hands, two skin tones (ZWJ)", text: "🧑\u{1F3FB}\u{200D}🤝\u{200D}🧑\u{1F3FF}", columns: 6),
        Sequence(name: "flag of Russia", text: "🇷🇺", columns: 2),
        Sequence(name: "a lone regional indicator", text: "\u{1F1F7}", columns: 1),
        Sequence(name: "three regional indicators", text: "🇷🇺\u{1F1F7}", columns: 3),
        Sequence(
            name: "flag of Scotland (tags)", text: "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", columns: 2
        ),
        // Keycaps: the grapheme-aware terminals draw 2.
        Sequence(name: "keycap 1", text: "1\u{FE0F}\u{20E3}", columns: 1),
        Sequence(name: "keycap # without VS16", text: "#\u{20E3}", columns: 1),
        Sequence(name: "emoji, joiner, ASCII", text: "🙂\u{200D}A", columns: 3),
    ]

    @Test(arguments: table) func aSequenceTakesTheColumnsTmuxAdvancesBy(_ sequence: Sequence) {
        #expect(DisplayWidth.of(sequence.text) == sequence.columns)
        let clusters = sequence.text.reduce(0) { $0 + DisplayWidth.of($1) }
        #expect(clusters == sequence.columns, "cluster by cluster as the layout measures")
        #expect(TextLayout.fit(sequence.text, width: 100) == [sequence.text])
    }

    @Test func aSanitisedSequenceKeepsItsWidth() {
        for sequence in Self.table where sequence.name != "emoji, joiner, ASCII" {
            #expect(TerminalSanitizer.sanitize(sequence.text) == sequence.text, "\(sequence.name)")
        }
    }

    /// The card: a name holding a family lines up with its neighbours, in every row.
    @Test func aCardWhoseNameHoldsAZWJSequenceLinesUp() {
        let products = ["Набор 👨\u{200D}👩\u{200D}👧 для семьи", "Кружка", "Плед 👩\u{1F3FD}\u{200D}💻"].enumerated().map {
            AssistantProduct(
                itemId: "p-\($0.offset)",
                ref: AssistantProductRef(opening: 1, dialog: 1, identity: 1, reply: 0, item: $0.offset),
                name: $0.element, sku: "SKU-\($0.offset)", price: .amount(100), currency: "RUB")
        }
        let rendering = CarouselBuilder().render(
            block: AssistantProductBlock(title: "Семья", products: products),
            layout: AssistantProductLayout(availableWidth: 99, isInteractionEnabled: true))
        let rows = rendering.lines.dropFirst().filter { $0.contains("│") || $0.contains("┌") || $0.contains("└") }
        #expect(!rows.isEmpty)
        for row in rows { #expect(DisplayWidth.of(row) == 74, "\(row)") }
    }

    /// Measures every sequence with tmux, when asked to (`DISPLAY_WIDTH_TMUX=1`): tmux must be
    /// installed, and the check depends on its version.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DISPLAY_WIDTH_TMUX"] == "1"))
    func tmuxAdvancesTheCursorByTheTablesWidths() throws {
        let directory = NSTemporaryDirectory() + "tmux-widths-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/socket"
        defer { _ = try? Self.tmux(socket, ["kill-server"]) }
        var measured: [String] = []
        for (index, sequence) in Self.table.enumerated() {
            let file = directory + "/\(index).txt"
            try ("|" + sequence.text).write(toFile: file, atomically: true, encoding: .utf8)
            let session = "w\(index)"
            _ = try Self.tmux(
                socket, ["new-session", "-d", "-s", session, "-x", "100", "-y", "5", "cat \(file); exec cat"])
            // Sessions stay until the end (killing the last one ends the server, and the next
            // session would race its exit). Polled, not slept: the pane shows the text once
            // `cat` wrote it.
            let deadline = Date().addingTimeInterval(60)
            var advance: Int?
            while advance == nil, Date() < deadline {
                let pane = try Self.tmux(socket, ["capture-pane", "-p", "-t", session])
                guard pane.hasPrefix("|") else { continue }
                let cursor = try Self.tmux(socket, ["display", "-p", "-t", session, "#{cursor_x}"])
                advance = Int(cursor.trimmingCharacters(in: .whitespacesAndNewlines)).map { $0 - 1 }
            }
            let columns = try #require(advance, "tmux never showed \(sequence.name)")
            measured.append("\(sequence.name): tmux \(columns), table \(sequence.columns)")
            #expect(columns == sequence.columns, "\(sequence.name)")
        }
        print(measured.joined(separator: "\n"))
    }

    /// Runs one tmux command through the shell, its output read with `popen`. Not `Process`:
    /// Foundation waits for descriptors that the tmux server (started by the first command, and
    /// living on) inherits, so that command would never seem to end.
    private static func tmux(_ socket: String, _ arguments: [String]) throws -> String {
        let quoted = (["tmux", "-S", socket] + arguments).map {
            "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        // Only a command that prints keeps the pipe; the server `new-session` starts must not.
        let prints = ["capture-pane", "display"].contains(arguments.first ?? "")
        let command =
            "LANG=C.UTF-8 LC_ALL=C.UTF-8 TMUX= " + quoted.joined(separator: " ") + " 2>/dev/null </dev/null"
            + (prints ? "" : " >/dev/null")
        guard let pipe = popen(command, "r") else { throw CocoaError(.fileReadUnknown) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        pclose(pipe)
        return String(decoding: output, as: UTF8.self)
    }
}
