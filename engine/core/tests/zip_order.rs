//! `private::zip_layout`, `zip_by_columns` and `zip_position` against the order in which
//! `ndarray::Zip` actually visits the elements: for operands in row-major, column-major,
//! transposed, stepped, reversed, permuted and broadcast layouts, alone and in pairs and
//! triples, the `k`-th element `Zip::indexed` visits is the one `zip_position` names.

use mochi_core::private::{zip_by_columns, zip_layout, zip_position};
use ndarray::{s, Array, Array1, Array2, Array3, ArrayView, IntoDimension, ShapeBuilder, Zip};

/// The multi-indices in the order `Zip` visits them, against the order predicted.
fn check<D: ndarray::Dimension + Copy>(views: &[ArrayView<'_, f64, D>], name: &str) {
    let d = views[0].raw_dim();
    let mut seen: Vec<Vec<usize>> = Vec::new();
    let mut record = |ix: D::Pattern| seen.push(ix.into_dimension().slice().to_vec());
    match views {
        [a] => Zip::indexed(a).for_each(|ix, _| record(ix)),
        [a, b] => Zip::indexed(a).and(b).for_each(|ix, _, _| record(ix)),
        [a, b, c] => Zip::indexed(a)
            .and(b)
            .and(c)
            .for_each(|ix, _, _, _| record(ix)),
        _ => unreachable!(),
    }
    let layouts: Vec<(u32, i32)> = views.iter().map(zip_layout).collect();
    let by_columns = zip_by_columns(&layouts, &d);
    let shape = d.slice().to_vec();
    assert_eq!(seen.len(), d.size(), "{name}");
    for (k, ix) in seen.iter().enumerate() {
        let mut flat = zip_position(&d, k, by_columns);
        let mut want = vec![0; shape.len()];
        for axis in (0..shape.len()).rev() {
            want[axis] = flat % shape[axis];
            flat /= shape[axis];
        }
        assert_eq!(
            &want, ix,
            "{name}: element {k} of `Zip`'s walk (layouts {layouts:?}, by columns: {by_columns})"
        );
    }
}

fn counting<D: ndarray::Dimension>(mut a: Array<f64, D>) -> Array<f64, D> {
    for (k, v) in a.iter_mut().enumerate() {
        *v = k as f64;
    }
    a
}

/// Every view alone, and every pair and triple of them.
fn all_combinations<D: ndarray::Dimension + Copy>(views: &[(&str, ArrayView<'_, f64, D>)]) {
    for (a, va) in views {
        check(std::slice::from_ref(va), a);
        for (b, vb) in views {
            check(&[*va, *vb], &format!("{a} and {b}"));
            for (c, vc) in views {
                check(&[*va, *vb, *vc], &format!("{a}, {b} and {c}"));
            }
        }
    }
}

#[test]
fn two_dimensions() {
    let c = counting(Array2::<f64>::zeros((3, 4)));
    let f = counting(Array2::<f64>::zeros((3, 4).f()));
    let tall = counting(Array2::<f64>::zeros((4, 3)));
    let big = counting(Array2::<f64>::zeros((6, 8)));
    let wide = counting(Array2::<f64>::zeros((8, 6)));
    let row = Array1::from(vec![1.0, 2.0, 3.0, 4.0]);
    let column = Array2::from_shape_vec((3, 1), vec![1.0, 2.0, 3.0]).unwrap();
    let wide_t = wide.t();
    let views = [
        ("row-major", c.view()),
        ("column-major", f.view()),
        ("transposed", tall.t()),
        ("stepped", big.slice(s![..;2, ..;2])),
        ("stepped rows", big.slice(s![..;2, ..4])),
        ("stepped columns", big.slice(s![..3, ..;2])),
        ("reversed rows", c.slice(s![..;-1, ..])),
        ("reversed columns", c.slice(s![.., ..;-1])),
        ("transposed and stepped", wide_t.slice(s![..3, ..;2])),
        ("a broadcast row", row.broadcast((3, 4)).unwrap()),
        ("a broadcast column", column.broadcast((3, 4)).unwrap()),
    ];
    all_combinations(&views);
}

#[test]
fn three_dimensions_and_degenerate_shapes() {
    let c = counting(Array3::<f64>::zeros((2, 3, 4)));
    let f = counting(Array3::<f64>::zeros((2, 3, 4).f()));
    let p = counting(Array3::<f64>::zeros((4, 2, 3)));
    let q = counting(Array3::<f64>::zeros((3, 4, 2)));
    let views = [
        ("row-major", c.view()),
        ("column-major", f.view()),
        ("permuted", p.view().permuted_axes([1, 2, 0])),
        ("permuted the other way", q.view().permuted_axes([2, 0, 1])),
        ("reversed", c.slice(s![.., ..;-1, ..])),
    ];
    all_combinations(&views);
    // One axis longer than one: logical order whatever the strides.
    let thin = counting(Array2::<f64>::zeros((1, 5)));
    let thin_f = counting(Array2::<f64>::zeros((5, 1).f()));
    all_combinations(&[("thin", thin.view()), ("thin transposed", thin_f.t())]);
}
