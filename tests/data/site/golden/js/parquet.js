/* The view's download as a Parquet file, written in the browser: one row group, one uncompressed PLAIN data page
   (v1) a column, every column OPTIONAL (a missing value is null, its definition level 0), typed by what it holds:
   DOUBLE when every value is a number, BOOLEAN when every value is true or false, else UTF-8 text. The metadata is
   Thrift's compact protocol, written by hand (the Parquet format's parquet.thrift gives the field ids used below).
   window.irboardParquet(names, rows) -> Uint8Array; rows hold numbers, strings, booleans, or undefined/null. */
(function () {
  "use strict";
  var DOUBLE = 5, BOOLEAN = 0, BYTE_ARRAY = 6;  /* parquet Type */
  var T_BOOL_TRUE = 1, T_BOOL_FALSE = 2, T_I32 = 5, T_I64 = 6, T_BINARY = 8, T_LIST = 9, T_STRUCT = 12;

  function Out() { this.bytes = []; }
  Out.prototype.byte = function (b) { this.bytes.push(b & 255); };
  Out.prototype.all = function (list) { for (var i = 0; i < list.length; i += 1) { this.bytes.push(list[i]); } };
  Out.prototype.varint = function (n) {  /* n >= 0, below 2^53 */
    while (n >= 128) { this.byte((n % 128) | 128); n = Math.floor(n / 128); }
    this.byte(n);
  };
  Out.prototype.le32 = function (n) { this.all([n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255]); };

  /* Thrift compact protocol: a struct is a list of [field id, type, value] (value: a number, text, boolean, a list
     {type, items} or a nested struct, an array of fields). Fields are written in id order, then a stop byte. */
  function struct(out, fields) {
    var last = 0;
    fields.forEach(function (field) {
      var id = field[0], type = field[1], value = field[2];
      if (type === T_BOOL_TRUE) { type = value ? T_BOOL_TRUE : T_BOOL_FALSE; }
      if (id - last > 0 && id - last <= 15) { out.byte(((id - last) << 4) | type); } else { out.byte(type); out.varint(2 * id); }
      last = id;
      if (type === T_BOOL_TRUE || type === T_BOOL_FALSE) { return; }
      write(out, type, value);
    });
    out.byte(0);
  }

  function write(out, type, value) {
    if (type === T_I32 || type === T_I64) { out.varint(2 * value); return; }  /* zigzag of a value >= 0 */
    if (type === T_BINARY) {
      var data = typeof value === "string" ? new TextEncoder().encode(value) : value;
      out.varint(data.length);
      out.all(data);
      return;
    }
    if (type === T_LIST) {
      var n = value.items.length;
      if (n < 15) { out.byte((n << 4) | value.type); } else { out.byte(0xF0 | value.type); out.varint(n); }
      value.items.forEach(function (item) {
        if (value.type === T_STRUCT) { struct(out, item); } else { write(out, value.type, item); }
      });
      return;
    }
    if (type === T_STRUCT) { struct(out, value); }
  }

  function kind(values) {
    var present = values.filter(function (v) { return v !== undefined && v !== null && v !== ""; });
    if (present.length && present.every(function (v) { return typeof v === "boolean"; })) { return BOOLEAN; }
    if (present.length && present.every(function (v) { return typeof v === "number" && isFinite(v); })) { return DOUBLE; }
    return BYTE_ARRAY;
  }

  /* A v1 data page's body: definition levels (RLE/bit-packed hybrid, bit width 1, one bit-packed run, after its
     4-byte length), then the PLAIN values of the rows that have one. */
  function pageBody(values, type) {
    var out = new Out(), levels = new Out(), groups = Math.ceil(values.length / 8) || 1;
    var present = values.map(function (v) { return v !== undefined && v !== null && v !== ""; });
    levels.varint(groups * 2 + 1);
    for (var g = 0; g < groups; g += 1) {
      var bits = 0;
      for (var k = 0; k < 8; k += 1) { if (present[g * 8 + k]) { bits |= 1 << k; } }
      levels.byte(bits);
    }
    out.le32(levels.bytes.length);
    out.all(levels.bytes);
    var kept = values.filter(function (v, i) { return present[i]; });
    if (type === DOUBLE) {
      var buffer = new DataView(new ArrayBuffer(8));
      kept.forEach(function (v) {
        buffer.setFloat64(0, v, true);
        for (var j = 0; j < 8; j += 1) { out.byte(buffer.getUint8(j)); }
      });
    } else if (type === BOOLEAN) {
      for (var start = 0; start < kept.length; start += 8) {
        var byte = 0;
        for (var b = 0; b < 8 && start + b < kept.length; b += 1) { if (kept[start + b]) { byte |= 1 << b; } }
        out.byte(byte);
      }
    } else {
      kept.forEach(function (v) {
        var data = new TextEncoder().encode(String(v));
        out.le32(data.length);
        out.all(data);
      });
    }
    return out.bytes;
  }

  window.irboardParquet = function (names, rows) {
    var file = new Out(), chunks = [], schema = [[[4, T_BINARY, "schema"], [5, T_I32, names.length]]];
    file.all([80, 65, 82, 49]);  /* PAR1 */
    names.forEach(function (name, c) {
      var values = rows.map(function (row) { return row[c]; }), type = kind(values);
      var body = pageBody(values, type), header = new Out();
      struct(header, [[1, T_I32, 0], [2, T_I32, body.length], [3, T_I32, body.length],
                      [5, T_STRUCT, [[1, T_I32, values.length], [2, T_I32, 0], [3, T_I32, 3], [4, T_I32, 3]]]]);
      var offset = file.bytes.length, size = header.bytes.length + body.length;
      file.all(header.bytes);
      file.all(body);
      var element = [[1, T_I32, type], [3, T_I32, 1], [4, T_BINARY, name]];
      if (type === BYTE_ARRAY) { element.push([6, T_I32, 0]); }  /* UTF8 */
      schema.push(element);
      chunks.push([[2, T_I64, offset], [3, T_STRUCT, [
        [1, T_I32, type], [2, T_LIST, { type: T_I32, items: [0, 3] }], [3, T_LIST, { type: T_BINARY, items: [name] }],
        [4, T_I32, 0], [5, T_I64, values.length], [6, T_I64, size], [7, T_I64, size], [9, T_I64, offset]]]]);
    });
    var total = file.bytes.length - 4, meta = new Out();
    struct(meta, [[1, T_I32, 1], [2, T_LIST, { type: T_STRUCT, items: schema }], [3, T_I64, rows.length],
                  [4, T_LIST, { type: T_STRUCT, items: [[[1, T_LIST, { type: T_STRUCT, items: chunks }],
                                                        [2, T_I64, total], [3, T_I64, rows.length]]] }],
                  [6, T_BINARY, "irboard (the view's download)"]]);
    file.all(meta.bytes);
    file.le32(meta.bytes.length);
    file.all([80, 65, 82, 49]);
    return new Uint8Array(file.bytes);
  };
})();
