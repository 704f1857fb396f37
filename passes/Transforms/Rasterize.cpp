//===- Rasterize.cpp - Block renumbering for T.use_swizzle ----------------===//

#include "passes/Transforms/Rasterize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tile;

void mlir::tile::rasterize(OpBuilder &b, Location loc, DictionaryAttr attr, Value gx,
                           Value gy, SmallVector<Value> &ids) {
  auto panelAttr = attr.getAs<IntegerAttr>("panel_size");
  auto orderAttr = attr.getAs<StringAttr>("order");
  int64_t panel = panelAttr ? panelAttr.getInt() : 1;
  bool byRow = !orderAttr || orderAttr.getValue() != "col";
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // "row" walks down `panel` rows (y) of a column before the next column.
  Value along = byRow ? gx : gy; // the dimension a panel spans whole
  Value total = arith::MulIOp::create(b, loc, gx, gy);
  Value id = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, ids[1], gx), ids[0]);
  Value panelSize = arith::MulIOp::create(b, loc, c(panel), along);
  Value offset = arith::RemUIOp::create(b, loc, id, panelSize);
  Value index = arith::DivUIOp::create(b, loc, id, panelSize);
  Value panels = arith::CeilDivUIOp::create(b, loc, total, panelSize);
  Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                       arith::AddIOp::create(b, loc, index, c(1)), panels);
  Value lastWidth = arith::DivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, total, arith::MulIOp::create(b, loc, index, panelSize)),
      along);
  Value stride = arith::SelectOp::create(b, loc, isLast, lastWidth, c(panel));
  Value walk = arith::DivUIOp::create(b, loc, offset, stride);
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, loc, index, c(1)), c(0));
  Value back = arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, along, c(1)), walk);
  Value across = arith::SelectOp::create(b, loc, odd, back, walk);
  Value within = arith::AddIOp::create(b, loc, arith::RemUIOp::create(b, loc, offset, stride),
                                       arith::MulIOp::create(b, loc, index, c(panel)));
  ids[0] = byRow ? across : within;
  ids[1] = byRow ? within : across;
}
