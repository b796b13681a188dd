// Keyed patching: a parent's children are matched to a list of items by key, so the nodes
// that stay keep their focus, scroll position, listeners and a press in progress. Only
// new items are created, gone ones removed, and the fewest nodes are moved (those outside
// the longest run already in order); where the browser has `moveBefore`, a move keeps
// focus too.

/** Indices (into `seq`) of a longest strictly increasing subsequence; -1 entries skipped. */
function longestRun(seq) {
  const tails = []; // tails[k]: index in seq of the smallest tail of a run of length k+1
  const prev = new Array(seq.length).fill(-1);
  for (let i = 0; i < seq.length; i += 1) {
    if (seq[i] < 0) continue;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]] < seq[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const keep = new Set();
  for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) keep.add(i);
  return keep;
}

function place(parent, node, ref) {
  if (node.isConnected && node.parentNode === parent && typeof parent.moveBefore === 'function') {
    try {
      parent.moveBefore(node, ref);
      return;
    } catch {
      // moveBefore refuses some moves (across documents, say); insertBefore always works.
    }
  }
  parent.insertBefore(node, ref);
}

/**
 * Makes the keyed children of `parent` match `items`, in order, before `anchor` (or at
 * the end). `create(item)` makes a node; `update(node, item)` brings one up to date (it
 * runs for new nodes too). Children not made here (an add form, say) are left alone.
 */
export function reconcile(parent, items, { key, create, update, anchor = null }) {
  const held = parent.__keyed || new Map();
  const next = new Map();
  const nodes = items.map((item) => {
    const k = key(item);
    let node = held.get(k);
    if (!node) {
      node = create(item);
      node.__key = k;
    }
    next.set(k, node);
    update(node, item);
    return node;
  });
  for (const [k, node] of held) if (!next.has(k)) node.remove();
  parent.__keyed = next;

  // Where each node stands now among the keyed children; new nodes count as out of place.
  const order = new Map();
  let i = 0;
  for (const child of parent.children) if (child.__key !== undefined && next.get(child.__key) === child) order.set(child, i++);
  const keep = longestRun(nodes.map((n) => (order.has(n) ? order.get(n) : -1)));
  let ref = anchor;
  for (let j = nodes.length - 1; j >= 0; j -= 1) {
    // Nodes of the longest in-order run stay put; every other one goes before its successor.
    if (!keep.has(j)) place(parent, nodes[j], ref);
    ref = nodes[j];
  }
}
