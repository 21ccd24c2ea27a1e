@testable import AssistantREPL

/// A small terminal screen, enough to replay what libedit and the line reader write (text
/// with auto-wrap and the pending-wrap column of xterm, CR, LF, BS, cursor moves, erase to the
/// end of the line and of the screen, inserting and deleting characters) and to see what a user would see, after a resize too.
///
/// A resize either keeps every row as it is (xterm) or re-wraps the rows a long line was
/// wrapped onto and moves the cursor with its text (tmux, VTE), as `reflows` says.
struct ScreenModel {
    private(set) var columns: Int
    let reflows: Bool
    /// Each row's cells; a wide character's second cell is `nil`.
    private var rows: [[Character?]] = [[]]
    /// Rows that continue on the next one because text wrapped at the margin.
    private var wrapped: [Bool] = [false]
    private var row = 0
    private var column = 0
    private var pendingWrap = false
    /// Sequences the model does not know, so a test can notice that it misread the output.
    private(set) var unknown: [String] = []

    init(columns: Int, reflows: Bool) {
        self.columns = columns
        self.reflows = reflows
    }

    /// The rows as text, without trailing spaces.
    var lines: [String] {
        rows.map { cells in
            var text = String(cells.compactMap { $0 })
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    /// The row the cursor is on.
    var cursorRow: Int { row }

    mutating func feed(_ text: String) {
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar {
            case "\r":
                column = 0
                pendingWrap = false
            case "\n":
                lineFeed()
            case "\u{8}":
                if pendingWrap { pendingWrap = false } else { column = max(0, column - 1) }
            case "\u{7}":
                break
            case "\u{1b}":
                escape(&scalars)
            default:
                put(scalar)
            }
        }
    }

    /// The terminal window changed its width.
    mutating func resize(to newColumns: Int) {
        guard reflows else {
            columns = newColumns
            pendingWrap = false
            column = min(column, newColumns - 1)
            return
        }
        // Join wrapped rows into lines, remember where the cursor is in its line, re-wrap.
        var logical: [[Character?]] = []
        var cursorLine = 0
        var cursorOffset = 0
        var current: [Character?] = []
        for index in rows.indices {
            if index == row {
                cursorLine = logical.count
                cursorOffset = current.count + column + (pendingWrap ? 1 : 0)
            }
            current +=
                rows[index] + Array(repeating: " ", count: wrapped[index] ? max(0, columns - rows[index].count) : 0)
            if !wrapped[index] {
                logical.append(current)
                current = []
            }
        }
        if !current.isEmpty { logical.append(current) }
        columns = newColumns
        rows = []
        wrapped = []
        for (index, line) in logical.enumerated() {
            var cells = line
            while cells.last == " " { cells.removeLast() }
            if index == cursorLine {
                row = rows.count + cursorOffset / newColumns
                column = cursorOffset % newColumns
            }
            repeat {
                let piece = Array(cells.prefix(newColumns))
                cells.removeFirst(piece.count)
                rows.append(piece)
                wrapped.append(!cells.isEmpty)
            } while !cells.isEmpty
        }
        while rows.count <= row {
            rows.append([])
            wrapped.append(false)
        }
        pendingWrap = false
    }

    // MARK: - Drawing

    private mutating func put(_ scalar: Unicode.Scalar) {
        let width = DisplayWidth.of(scalar)
        guard width > 0 else { return }
        if pendingWrap || column + width > columns {
            wrapped[row] = true
            lineFeed()
            column = 0
        }
        pendingWrap = false
        ensureCells(upTo: column + width)
        rows[row][column] = Character(scalar)
        if width == 2 { rows[row][column + 1] = nil }
        column += width
        if column >= columns {
            column = columns - 1
            pendingWrap = true
        }
    }

    private mutating func lineFeed() {
        pendingWrap = false
        row += 1
        if row == rows.count {
            rows.append([])
            wrapped.append(false)
        }
    }

    private mutating func ensureCells(upTo count: Int) {
        if rows[row].count < count { rows[row] += Array(repeating: " ", count: count - rows[row].count) }
    }

    private mutating func escape(_ scalars: inout Substring.UnicodeScalarView) {
        guard let introducer = scalars.popFirst() else { return }
        guard introducer == "[" else {
            if introducer != "=" && introducer != ">" { unknown.append("ESC \(introducer)") }
            return
        }
        var parameters = ""
        while let next = scalars.first, (0x30...0x3f).contains(next.value) {
            parameters.unicodeScalars.append(scalars.removeFirst())
        }
        guard let final = scalars.popFirst() else { return }
        let count = max(1, Int(parameters) ?? 1)
        switch final {
        case "A":
            row = max(0, row - count)
            pendingWrap = false
        case "B":
            for _ in 0..<count { lineFeed() }
        case "C":
            column = min(columns - 1, column + count)
            pendingWrap = false
        case "D":
            column = max(0, column - count)
            pendingWrap = false
        case "J" where parameters.isEmpty || parameters == "0":
            if rows[row].count > column { rows[row].removeSubrange(column...) }
            wrapped[row] = false
            rows.removeSubrange((row + 1)...)
            wrapped.removeSubrange((row + 1)...)
        case "K" where parameters.isEmpty || parameters == "0":
            if rows[row].count > column { rows[row].removeSubrange(column...) }
        case "G":
            column = min(columns - 1, count - 1)
            pendingWrap = false
        case "@":
            ensureCells(upTo: column)
            rows[row].insert(contentsOf: Array(repeating: " ", count: count), at: column)
            if rows[row].count > columns { rows[row].removeSubrange(columns...) }
        case "P":
            if rows[row].count > column {
                rows[row].removeSubrange(column..<min(rows[row].count, column + count))
            }
        case "m", "h", "l":
            break
        default:
            unknown.append("CSI \(parameters)\(final)")
        }
    }
}
