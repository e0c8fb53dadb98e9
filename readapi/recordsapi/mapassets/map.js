// The records service's map: parcels from its vector tiles, coloured by
// the layer that names them, a click showing the parcel's signal report
// (from the public parcels search). Every value from the data is set as
// text, never as HTML.
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('map-config').textContent);
  maplibregl.setWorkerUrl(cfg.assets + '/maplibre-gl-csp-worker.js');

  // Layers in the order a parcel's colour is chosen (the first that names it).
  var colours = [
    ['foreclosure_auction', '#b2182b'], ['lis_pendens', '#d6604d'], ['tax_sale', '#f4a582'],
    ['tax_delinquent', '#e08214'], ['vacant', '#4393c3'], ['code_violation', '#5aae61']
  ];
  var colour = ['case'];
  colours.forEach(function (c) { colour.push(['in', c[0], ['get', 'layers']], c[1]); });
  colour.push('#878787');

  var sources = {
    parcels: { type: 'vector', tiles: [cfg.tiles], minzoom: cfg.minzoom, maxzoom: 16 }
  };
  var layers = [{ id: 'background', type: 'background', paint: { 'background-color': '#e8ecef' } }];
  if (cfg.basemap) {
    sources.basemap = { type: 'raster', tiles: [cfg.basemap], tileSize: 256, attribution: cfg.attribution || '' };
    layers.push({ id: 'basemap', type: 'raster', source: 'basemap' });
  }
  layers.push({
    id: 'parcels', type: 'circle', source: 'parcels', 'source-layer': 'parcels',
    paint: {
      'circle-color': colour,
      // A cluster (a tile past its zoom's cap) is drawn by its count.
      'circle-radius': ['interpolate', ['linear'], ['zoom'],
        10, ['case', ['has', 'count'], ['interpolate', ['linear'], ['get', 'count'], 1, 3, 100, 8, 1000, 14], 2],
        14, ['case', ['has', 'count'], ['interpolate', ['linear'], ['get', 'count'], 1, 4, 100, 9, 1000, 15], 4],
        18, 8],
      'circle-stroke-color': '#ffffff', 'circle-stroke-width': 0.5
    }
  });
  var map = new maplibregl.Map({
    container: 'map', center: [cfg.lon, cfg.lat], zoom: cfg.zoom,
    style: { version: 8, sources: sources, layers: layers }
  });
  map.addControl(new maplibregl.NavigationControl());
  window.arrMap = map;

  var legend = document.getElementById('legend-items');
  colours.concat([['no layer', '#878787']]).forEach(function (c) {
    var li = document.createElement('li');
    var dot = document.createElement('span');
    dot.className = 'dot';
    dot.style.background = c[1];
    li.appendChild(dot);
    li.appendChild(document.createTextNode(c[0]));
    legend.appendChild(li);
  });

  function el(tag, text) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // report renders a parcel's signal report from a feature of the public
  // search (/api/v1/parcels?apn=&county=) and the tile's score.
  function report(f, score) {
    var p = f.properties, div = el('div');
    div.className = 'report';
    div.appendChild(el('h2', p.address || p.apn));
    div.appendChild(el('div', 'APN ' + p.apn + ', county ' + p.county));
    div.appendChild(el('div', 'Motivation score ' + score + ' (weights ' + cfg.weights + ')'));
    var t = el('table'), head = el('tr');
    ['layer', 'source date', 'first seen', 'last seen', 'last crawl'].forEach(function (h) { head.appendChild(el('th', h)); });
    t.appendChild(head);
    (p.signals || []).forEach(function (s) {
      var r = el('tr');
      [s.layer, s.source_date, (s.first_seen || '').slice(0, 10), (s.last_seen || '').slice(0, 10), (s.last_crawl || '').slice(0, 10)]
        .forEach(function (v) { r.appendChild(el('td', v)); });
      t.appendChild(r);
    });
    div.appendChild(t);
    if (!(p.signals || []).length) div.appendChild(el('div', 'No layer names this parcel now.'));
    return div;
  }

  map.on('click', 'parcels', function (e) {
    var f = e.features[0], props = f.properties;
    if (props.cluster) {
      // A cluster of a tile past its zoom's cap (count parcels): zoom in.
      map.easeTo({ center: f.geometry.coordinates, zoom: Math.min(map.getZoom() + 2, 16) });
      return;
    }
    var popup = new maplibregl.Popup({ maxWidth: '360px' }).setLngLat(f.geometry.coordinates).setText('Loading ' + props.apn + '…').addTo(map);
    var u = cfg.api + '/parcels?apn=' + encodeURIComponent(props.apn) + '&county=' + encodeURIComponent(props.county);
    fetch(u).then(function (r) { return r.json(); }).then(function (fc) {
      var hit = (fc.features || []).filter(function (x) { return x.properties.apn === props.apn; })[0];
      if (!hit) { popup.setText('No report for ' + props.apn); return; }
      popup.setDOMContent(report(hit, props.score));
    }).catch(function (err) { popup.setText('The report could not be loaded: ' + err); });
  });
  map.on('mouseenter', 'parcels', function () { map.getCanvas().style.cursor = 'pointer'; });
  map.on('mouseleave', 'parcels', function () { map.getCanvas().style.cursor = ''; });
}());
